"""Before each user message: the initial context on the first turn, later only what changed in
the environment, appended as a new item (never edited in, so the request prefix stays stable)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.environment import EnvironmentContext
from agent_cli.context.environment import diff as environment_diff
from agent_cli.items import user
from agent_cli.sandbox.guard import home_notice, start_watching
from agent_cli.sandbox.policy import start_warning
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState, fresh_initial_context
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext


def start_context(
    turn: TurnContext, state: SessionState, services: SessionServices, load_warnings: Sequence[str], emit: Emit
) -> None:
    """Record the initial context (first time: ``load_warnings``, what reading the configuration,
    plugins and agent files met, are shown with it), or what changed in the environment since."""
    if state.initial is not None:
        current = current_environment(turn.config)
        if change := environment_diff(state.environment, current):
            state.record(user(change))
        state.environment = current
        return
    config, approvals = turn.config, services.approvals
    if services.shell_snapshot is not None:
        services.shell_snapshot.start()  # in the background, while the first request goes out
    initial = fresh_initial_context(
        config, turn.mode, approvals.permissions, state.meter.window.tokens, turn.plugin_skills
    )
    state.restart_context(initial)
    for warning in (*load_warnings, *initial.warnings):
        emit(ev.Warning(warning))
    if sandbox_warning := start_warning(config.sandbox_mode, approvals.interactive):
        emit(ev.Warning(sandbox_warning))
    if approvals.sandbox is not None and approvals.sandbox.mode == "workspace-write":
        start_watching(approvals.sandbox.workspace_roots)  # nested .git found while the model thinks
        if notice := home_notice(config.cwd):
            emit(ev.Warning(notice))  # once: what stays read-only when the home folder is writable
    state.history.extend(initial.items)


def current_environment(config: Config) -> EnvironmentContext:
    return EnvironmentContext.detect(
        config.cwd, config.approval_policy, config.sandbox_mode, config.network_access, config.writable_roots
    )

"""The session's mutable state, as its turns read and change it (Codex's ``SessionState``).

A turn's steps get three things: a :class:`~agent_cli.session.turn_context.TurnContext` (plain
values, fixed for the turn), this state, and the session's services (session/services.py). None
of them leads back to the ``Session``: the steps change the history, the meter, the compaction
and hook state here, and a compaction replaces the history through :meth:`SessionState.replace_history`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.environment import EnvironmentContext
from agent_cli.context.image_items import no_vision_warning, without_images
from agent_cli.context.initial import InitialContext, build_initial_context
from agent_cli.context.skills import Skill, skill_injections
from agent_cli.items import Item
from agent_cli.permissions.engine import Permissions
from agent_cli.session.compaction_state import CompactionState
from agent_cli.session.hook_state import HookState
from agent_cli.session.inbox import Inbox
from agent_cli.session.meter import ContextMeter
from agent_cli.session.request_parts import RequestParts, RequestShape
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.store.rollout import RecordingHistory


@dataclass(eq=False)
class SessionState:
    history: RecordingHistory  # items counted by the current model's counter; every change goes to the file
    meter: ContextMeter  # usage, token counts, the window, auto-compaction thresholds
    compaction: CompactionState
    hooks: HookState  # the hook table and what hooks still have to do (pending SessionStart, context)
    request: RequestShape  # the system prompt (built once) and the tool list
    initial: InitialContext | None = None  # recorded at the start of the history
    environment: EnvironmentContext | None = None  # as last sent to the model
    told: set[str] = field(default_factory=set)  # what the user hears once: "no vision", "load warnings"
    inbox: Inbox = field(default_factory=Inbox)  # input a front end adds while a turn runs (Steer)

    def record(self, item: Item) -> None:
        self.history.record(item)

    def request_parts(self, turn: TurnContext) -> RequestParts:
        """The next request's system prompt, tools and door (computed once per request)."""
        return self.request.parts(turn.mode, turn.tool_limit, self.meter.window.tokens)

    def request_items(self, turn: TurnContext, emit: Emit) -> list[Item]:
        """The history as the next request sends it: a model without vision gets notes for images."""
        items = self.history.for_request()
        if turn.sees_images or not self.history.has_images:  # nothing to replace: no pass over every item
            return items
        items, replaced = without_images(items, turn.model)
        if replaced and "no vision" not in self.told:
            self.told.add("no vision")
            emit(ev.Warning(no_vision_warning(turn.model)))
        return items

    def skill_fragments(self, text: str) -> list[str]:
        """Bodies of the skills ``text`` mentions as ``$name``, for this turn."""
        return skill_injections(text, self.initial.skills) if self.initial else []

    def restart_context(self, initial: InitialContext) -> None:
        """``initial`` was sent in full (a compaction, a resume): later environment diffs start from it."""
        self.initial = initial
        self.environment = initial.environment

    def replace_history(self, items: list[Item], initial: InitialContext | None) -> None:
        """Swap in a compacted history, which starts with ``initial`` (None: the previous initial
        context was kept). History.replace is the call point session files record; no usage report
        describes the new history, and the system prompt is built again for it."""
        self.history.replace(items)
        self.meter.history_replaced(len(items))
        self.request.rebuild()
        if initial is not None:
            self.restart_context(initial)


def fresh_initial_context(
    config: Config, mode: str, permissions: Permissions, window: int, plugin_skills: Iterable[Skill]
) -> InitialContext:
    """A fresh initial context: AGENTS.md re-read, skills re-scanned, full environment."""
    return build_initial_context(
        cwd=config.cwd,
        agent_home=config.agent_home,
        mode=mode,
        approval_policy=config.approval_policy,
        sandbox_mode=config.sandbox_mode,
        network_access=config.network_access,
        writable_roots=config.writable_roots,
        project_doc_max_bytes=config.project_doc_max_bytes,
        fallback_filenames=config.project_doc_fallback_filenames,
        context_window=window,
        plugin_skills=plugin_skills,
        hidden=permissions.read_denied if permissions.hides_any() else None,  # Read deny rules
    )

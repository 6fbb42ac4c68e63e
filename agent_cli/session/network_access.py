"""The session's side of the sandbox's network: the lists for this folder, the question a front end
answers, and the session file's record of every decision.

The question is Claude Code's: "Network request outside of sandbox — Host: X" with Yes (this
session), "Yes, and don't ask again for X" (saved to the user's config.toml) and No (refused for
this session). It travels as an :class:`~agent_cli.events.ApprovalRequest` whose tool is
``network`` and summary the host, through the events of the command that waits on it, so every
front end that answers approvals answers it. Where nobody can answer (``agent exec``, approval
policy ``never``) an unlisted host is refused and the model reads which one and how to allow it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.network.gate import ALWAYS, NO, ONCE, Decision, Question, Watch
from agent_cli.network.lists import read_lists
from agent_cli.network.saving import save_allowed_domain
from agent_cli.network.session_network import SessionNetwork
from agent_cli.permissions.sources import project_root
from agent_cli.store.rollout import NETWORK_TYPE, RolloutWriter

if TYPE_CHECKING:
    from agent_cli.session.approvals import Approvals

QUESTION = "Network request outside of sandbox"
ANSWERS = {"approve": ONCE, "approve_session": ONCE, "approve_always": ALWAYS}


def session_network(
    config: Config, approvals: Approvals, trusted: bool, interactive: bool, local_only: bool = True
) -> SessionNetwork:
    """The network for a session in ``config``'s folder (``trusted``: the repository's allowed
    domains apply); ``local_only``: its commands run as this process's children (not in an editor's
    terminal), which the proxy then checks."""
    lists = read_lists(
        config.layers, project_root(config.cwd), approvals.permissions.rules, trusted, config.claude_settings
    )
    can_ask = interactive and approvals.policy != "never"
    network = SessionNetwork(
        lists,
        sandbox_mode=config.sandbox_mode,
        network_access=config.network_access,
        run_dir=config.agent_home / "network",  # not run/: every sandbox masks the warm server's folder
        local_only=local_only,
        question=network_question(approvals) if can_ask else None,
        cannot_ask="this session cannot ask (non-interactive)"
        if not interactive
        else f"approval policy '{approvals.policy}' does not ask",
    )
    network.gate.saved = lambda host: save_allowed_domain(config.agent_home / "config.toml", host)
    return network


def network_question(approvals: Approvals) -> Question:
    async def ask(host: str, port: int, watch: Watch) -> str:
        if approvals.question_shown is not None:
            approvals.question_shown(ev.NETWORK_QUESTION, watch.emit)  # Notification hooks
        decision = await approvals.request_decision(
            watch.call_id, ev.NETWORK_QUESTION, host, f"{QUESTION}: port {port}", watch.emit
        )
        return ANSWERS.get(decision.decision, NO)

    return ask


def log_decisions(network: SessionNetwork, rollout: RolloutWriter) -> None:
    """Each host, port and answer once in the session file."""

    def record(decision: Decision) -> None:
        rollout.append_learned_like({"type": NETWORK_TYPE, **asdict(decision)})

    network.gate.on_decision = record

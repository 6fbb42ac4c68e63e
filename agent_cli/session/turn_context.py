"""What one turn works with that does not change while it runs: plain values, resolved when it starts.

``Session.turn`` (and a compaction, a subagent's turn, a hook run outside a turn) resolves a
:class:`TurnContext` and passes it to the turn's steps (turn.py, tool_call.py, compaction.py,
hooks.py...) beside the session's mutable state (session_state.py) and its services
(services.py), as Codex does. Nothing here leads back to the session: the model, the mode and the
tool limit a turn starts with are the ones it ends with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_cli.config import Config
from agent_cli.context.skills import Skill


@dataclass(frozen=True, slots=True)
class TurnContext:
    config: Config  # the effective config, read only
    session_id: str
    model: str
    mode: str
    number: int  # the turn's number in the session (0 outside a turn: a /compact)
    tool_limit: frozenset[str] | None  # at most these tools (a command's, the Claude SDK's --tools)
    sees_images: bool  # the model sees images (else they are sent as notes)
    plugin_skills: tuple[Skill, ...]  # the plugins' skills, for an initial context built afresh
    output_schema: dict[str, Any] | None  # agent exec --output-schema
    agent_name: str | None  # a subagent's agent; None in the user's own session

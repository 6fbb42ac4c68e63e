"""The questions a turn waits on: a front end answers each through its future, and the turn goes
on with the answer. They are events (``events.Event`` names the requests) and are used as ``ev.*``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """The policy asks the user. A front end resolves ``future`` with an ApprovalDecision
    (:meth:`answer`); several may be shown one request, and the first answer wins."""

    call_id: str
    tool: str
    summary: str  # the command, or the patch
    reason: str | None = None
    future: asyncio.Future[ApprovalDecision] = field(compare=False, repr=False, default=None)  # type: ignore[assignment]
    agent: str | None = None  # the subagent whose call this is; None for the session's own
    suggested_rule: str | None = None  # what "Yes, and don't ask again" saves (the user may edit it)
    rule_files: tuple[str, ...] = ()  # where it may be saved ("agent", "claude"), the remembered choice alone

    def answer(self, decision: ApprovalDecision) -> bool:
        """Decide the request, unless it is decided already (another client answered first, or
        the turn ended); returns whether this answer counted."""
        if self.future is None or self.future.done():
            return False
        self.future.set_result(decision)
        return True


NETWORK_QUESTION = "network"  # ApprovalRequest.tool for "Network request outside of sandbox" (summary: the host)


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    decision: Literal["approve", "approve_session", "approve_always", "deny"]
    reason: str | None = None
    rule: str | None = None  # approve_always: the allow rule to save
    save_to: str | None = None  # approve_always: "agent" (.agent/config.toml) or "claude" (.claude/settings.local.json)
    # approve: run the call with these arguments instead (the Claude Agent SDK's updatedInput)
    arguments: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """An MCP server asks the user for input mid-call (``elicitation/create``). A front end that
    can ask resolves ``future`` with an :class:`ElicitationAnswer`; ``schema`` is the form's
    (flat, primitive fields) in form mode, ``url`` the page to open in URL mode."""

    server: str
    message: str
    mode: Literal["form", "url"]
    schema: dict[str, Any] = field(default_factory=dict)
    url: str | None = None
    future: asyncio.Future[ElicitationAnswer] = field(compare=False, repr=False, default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None  # accept in form mode: the validated values
    open_url: bool = True  # accept in URL mode: the agent opens the page (False: the front end did)

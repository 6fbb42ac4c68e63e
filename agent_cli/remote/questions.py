"""The host's questions (server requests on Codex's protocol) as the events a front end answers:
``item/commandExecution/requestApproval`` and ``item/fileChange/requestApproval`` become an
``ApprovalRequest``, ``mcpServer/elicitation/request`` an ``ElicitationRequest``; the answer set on
the event's future goes back as the request's result. The reverse of ``app_server/questions.py``."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_cli import events as ev

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
ELICITATION = "mcpServer/elicitation/request"
ASKED = (COMMAND_APPROVAL, FILE_APPROVAL, ELICITATION)
# A yes saved as a rule has no room in the protocol: over the wire it is a yes for the session.
DECISIONS = {"approve": "accept", "approve_session": "acceptForSession", "approve_always": "acceptForSession"}
ANSWERED_ELSEWHERE = "answered in another window"


def question_event(method: str, params: dict[str, Any], item: dict[str, Any] | None) -> ev.Event:
    """The event for a question the host asks; ``item``: the item it is about, as it started."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    if method == ELICITATION:
        mode = "url" if params.get("mode") == "url" else "form"
        schema = params.get("requestedSchema")
        return ev.ElicitationRequest(
            str(params.get("serverName", "")),
            str(params.get("message", "")),
            mode,
            schema if isinstance(schema, dict) else {},
            params.get("url") if isinstance(params.get("url"), str) else None,
            future,
        )
    call_id = str(params.get("itemId", ""))
    reason = params.get("reason") if isinstance(params.get("reason"), str) else None
    if method == FILE_APPROVAL:
        changes = (item or {}).get("changes") or []
        diff = "\n".join(str(change.get("diff", "")) for change in changes if isinstance(change, dict))
        return ev.ApprovalRequest(call_id, "apply_patch", diff or "(the patch's changes)", reason, future)
    command = str(params.get("command", ""))
    tool = "shell"
    if item is not None and item.get("type") == "dynamicToolCall":  # another tool the policy asks about
        tool = str(item.get("tool", tool))
        command = command.removeprefix(f"{tool}: ")
    return ev.ApprovalRequest(call_id, tool, command, reason, future)


def answer_of(event: ev.Event) -> dict[str, Any]:
    """The request's result for the answer set on ``event``'s future."""
    if isinstance(event, ev.ElicitationRequest):
        answer = event.future.result()
        return {"action": answer.action, "content": answer.content if answer.action == "accept" else None}
    assert isinstance(event, ev.ApprovalRequest)
    decision = event.future.result()
    return {"decision": DECISIONS.get(decision.decision, "decline")}


def withdrawn(event: ev.Event) -> None:
    """Another client answered first (or the turn ended): the question closes unanswered here."""
    future = getattr(event, "future", None)
    if future is None or future.done():
        return
    if isinstance(event, ev.ElicitationRequest):
        future.set_result(ev.ElicitationAnswer("cancel"))
    else:
        future.set_result(ev.ApprovalDecision("deny", reason=ANSWERED_ELSEWHERE))

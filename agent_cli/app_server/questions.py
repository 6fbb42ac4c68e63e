"""Our approval and elicitation events as Codex's server requests, and their answers back:
``item/commandExecution/requestApproval`` for commands (and any other tool the policy asks
about), ``item/fileChange/requestApproval`` for patches, ``mcpServer/elicitation/request`` for an
MCP server's question. Decisions: accept, acceptForSession, decline, cancel (no, and stop the turn)."""

from __future__ import annotations

from typing import Any

from agent_cli import events as ev
from agent_cli.app_server.items import PATCH, SHELL
from agent_cli.app_server.turn_items import now_ms

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
ELICITATION = "mcpServer/elicitation/request"
DECISIONS = ["accept", "acceptForSession", "decline", "cancel"]
OURS = {"accept": "approve", "acceptForSession": "approve_session", "decline": "deny", "cancel": "deny"}


def approval_request(
    event: ev.ApprovalRequest, thread_id: str, turn_id: str, item_id: str | None, cwd: str
) -> tuple[str, dict[str, Any]]:
    base = {
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": item_id or event.call_id,
        "startedAtMs": now_ms(),
        "reason": event.reason,
    }
    if event.tool == PATCH:
        return FILE_APPROVAL, base
    command = event.summary if event.tool == SHELL else f"{event.tool}: {event.summary}"
    who = f" (subagent {event.agent})" if event.agent else ""
    return COMMAND_APPROVAL, {
        **base,
        "reason": (event.reason or "") + who or None,
        "command": command,
        "cwd": cwd,
        "commandActions": [{"type": "unknown", "command": command}],
        "availableDecisions": DECISIONS,
    }


def approval_decision(result: Any | None) -> tuple[ev.ApprovalDecision, bool]:
    """The client's answer as our decision, and whether it also stops the turn (``cancel``).
    Anything we cannot read is a no."""
    decision = result.get("decision") if isinstance(result, dict) else None
    if isinstance(decision, dict) and "acceptWithExecpolicyAmendment" in decision:
        return ev.ApprovalDecision("approve_session"), False  # "don't ask again for this command"
    if not isinstance(decision, str) or decision not in OURS:
        return ev.ApprovalDecision("deny", reason="no answer from the client"), False
    return ev.ApprovalDecision(OURS[decision]), decision == "cancel"  # type: ignore[arg-type]


def elicitation_request(
    event: ev.ElicitationRequest, thread_id: str, turn_id: str | None
) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"threadId": thread_id, "turnId": turn_id, "serverName": event.server}
    if event.mode == "url":
        params.update(mode="url", message=event.message, url=event.url or "", elicitationId=f"{thread_id}-{now_ms()}")
    else:
        params.update(mode="form", message=event.message, requestedSchema=form_schema(event.schema))
    return ELICITATION, params


FIELD_KEYS = {"type", "title", "description", "default", "enum", "enumNames", "const", "oneOf", "anyOf", "items",
              "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "format"}  # fmt: skip


def form_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP form as Codex's ``McpElicitationSchema`` takes it: the object and its flat fields,
    without the keys it has no room for (a form's title, a field's extra annotations)."""
    fields = schema.get("properties")
    if not isinstance(fields, dict):
        fields = {}
    shaped: dict[str, Any] = {
        "type": "object",
        "properties": {
            name: {key: value for key, value in field.items() if key in FIELD_KEYS}
            for name, field in fields.items()
            if isinstance(field, dict)
        },
    }
    if isinstance(required := schema.get("required"), list):
        shaped["required"] = [name for name in required if isinstance(name, str)]
    return shaped


def elicitation_answer(result: Any | None) -> ev.ElicitationAnswer:
    action = result.get("action") if isinstance(result, dict) else None
    if action not in ("accept", "decline", "cancel"):
        return ev.ElicitationAnswer("cancel")
    content = result.get("content") if isinstance(result, dict) else None
    return ev.ElicitationAnswer(action, content if isinstance(content, dict) else None)  # type: ignore[arg-type]

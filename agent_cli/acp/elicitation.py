"""MCP elicitation through ACP (``elicitation/create``, unstable in the protocol): an editor that
announces the form or URL capability shows the server's question; one that does not has it declined."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from acp.schema import (
    AcceptElicitationResponse,
    ClientCapabilities,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
)
from pydantic import AnyUrl

from agent_cli import events as ev

log = logging.getLogger(__name__)


def supports(capabilities: ClientCapabilities, mode: str | None = None) -> bool:
    """Whether the editor shows elicitations (of ``mode``, or of any mode)."""
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    if mode is None:
        return elicitation.form is not None or elicitation.url is not None
    return getattr(elicitation, mode, None) is not None


def ask_editor(conn: Any, capabilities: ClientCapabilities, session_id: str, request: ev.ElicitationRequest) -> None:
    """Ask the editor without blocking the event stream; the MCP call waits on the request's future."""

    async def ask() -> None:
        answer = ev.ElicitationAnswer("decline")
        try:
            if supports(capabilities, request.mode):
                if request.mode == "url":
                    mode: Any = ElicitationUrlSessionMode(
                        session_id=session_id, elicitation_id=uuid.uuid4().hex, url=AnyUrl(request.url or "")
                    )
                else:
                    mode = ElicitationFormSessionMode(
                        session_id=session_id, requested_schema=ElicitationSchema.model_validate(request.schema)
                    )
                reply = await conn.create_elicitation(message=request.message, mode=mode)
                action = getattr(reply, "action", "cancel")
                content = reply.content if isinstance(reply, AcceptElicitationResponse) else None
                if action in ("accept", "decline", "cancel"):
                    answer = ev.ElicitationAnswer(action, content, open_url=False)  # the editor shows the page
        except Exception as exc:  # noqa: BLE001 - an editor that cannot answer declines
            log.warning("elicitation request failed: %s", exc)
        if request.future is not None and not request.future.done():
            request.future.set_result(answer)

    asyncio.ensure_future(ask())

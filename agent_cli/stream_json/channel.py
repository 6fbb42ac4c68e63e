"""The two directions of the stream-json pipe: NDJSON messages written to the protocol's stdout,
and control requests the agent sends the host (``can_use_tool``, ``hook_callback``,
``mcp_message``), each waiting for the ``control_response`` that names its id."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any


class ControlError(Exception):
    """The host answered a control request with an error, or can no longer answer."""


class Channel:
    def __init__(self, out_fd: int):
        self.out_fd = out_fd
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.closed = False  # stdin reached its end: nobody will answer a request any more

    def write(self, message: dict[str, Any]) -> None:
        """One message, one line. Written whole and at once, so lines of concurrent tasks never mix."""
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.out_fd, view)
            except BlockingIOError:
                continue
            view = view[written:]

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send ``request`` to the host and wait for its answer (the ``response`` object)."""
        if self.closed:
            raise ControlError(f"cannot ask the host ({request.get('subtype')}): its input is closed")
        request_id = f"agent_req_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.write({"type": "control_request", "request_id": request_id, "request": request})
        try:
            return await future
        finally:
            if self._pending.pop(request_id, None) is not None and not self.closed:
                # stopped while waiting (an interrupt): the host may drop its work on it
                self.write({"type": "control_cancel_request", "request_id": request_id})

    def answered(self, response: dict[str, Any]) -> None:
        """A ``control_response`` from the host: settle the request it names."""
        future = self._pending.pop(str(response.get("request_id")), None)
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the host answered with an error")))
        else:
            answer = response.get("response")
            future.set_result(answer if isinstance(answer, dict) else {})

    def close(self) -> None:
        """stdin ended: every request still waiting fails (a question nobody answers is a no)."""
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("the host closed its input before answering"))
        self._pending.clear()

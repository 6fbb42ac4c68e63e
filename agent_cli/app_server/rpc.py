"""JSON-RPC 2.0 as Codex's app-server speaks it: no ``"jsonrpc"`` field, one JSON object per line
(stdio) or per WebSocket text frame. Messages are plain dicts; this module names their kinds, builds
them and turns a received text into one, or into the error to answer with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
OVERLOADED = -32001  # Codex's answer when request ingress is saturated
OVERLOADED_MESSAGE = "Server overloaded; retry later."

RequestId = int | str


class RpcError(Exception):
    """An error answer to a request: raised by a method handler, sent as ``{"id", "error"}``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def payload(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_params(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, message)


def invalid_request(message: str) -> RpcError:
    return RpcError(INVALID_REQUEST, message)


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    """The answer to a request the server sent (an approval): ``result`` or ``error``."""

    id: RequestId
    result: Any = None
    error: dict[str, Any] | None = None


Incoming = Request | Notification | Response


class BadMessage(Exception):
    """A text that is not a message we can take; ``reply`` is the error answer to send (with the
    request's id when it had a readable one, else null)."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(reply["error"]["message"])
        self.reply = reply


def decode(text: str | bytes) -> Incoming:
    """One received message, or :class:`BadMessage` with the answer JSON-RPC prescribes."""
    try:
        message = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadMessage(error_reply(None, RpcError(PARSE_ERROR, f"Parse error: {exc}"))) from None
    except RecursionError:  # [[[[… nested deeper than the parser goes: an error, not the connection's end
        raise BadMessage(error_reply(None, RpcError(PARSE_ERROR, "Parse error: nested too deeply"))) from None
    if not isinstance(message, dict):
        raise BadMessage(error_reply(None, RpcError(INVALID_REQUEST, "Invalid request: expected a JSON object")))
    raw_id = message.get("id")
    valid_id = isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool)
    method = message.get("method")
    if method is None and valid_id and ("result" in message or "error" in message):
        error = message.get("error")
        return Response(raw_id, message.get("result"), error if isinstance(error, dict) else None)  # type: ignore[arg-type]
    if not isinstance(method, str) or not method:
        raise BadMessage(error_reply(raw_id if valid_id else None, invalid_request("Invalid request: no method")))
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        reply_id = raw_id if valid_id else None
        raise BadMessage(error_reply(reply_id, invalid_params("Invalid params: expected an object")))
    if "id" not in message:
        return Notification(method, params)
    if not valid_id:
        raise BadMessage(error_reply(None, invalid_request("Invalid request: id must be a string or an integer")))
    return Request(raw_id, method, params)  # type: ignore[arg-type]


def request(request_id: RequestId, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"id": request_id, "method": method, "params": params}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"method": method, "params": params}


def result_reply(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def error_reply(request_id: RequestId | None, error: RpcError) -> dict[str, Any]:
    return {"id": request_id, "error": error.payload()}


def encode(message: dict[str, Any]) -> str:
    """One line of compact JSON (a newline inside a string is escaped, so the line never breaks)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))

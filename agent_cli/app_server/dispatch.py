"""Which handler answers which method, and the rules every method shares: ``initialize`` first
(once), an unknown method gets JSON-RPC's method-not-found, a handler's bad-params or door error
becomes an error answer, never a crash."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_cli.app_server import rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.sessions import DoorError

Method = Callable[[Connection, dict[str, Any]], Awaitable[Any]]
BEFORE_INITIALIZE = ("initialize",)


class Dispatcher:
    def __init__(self, host: ThreadHost, methods: dict[str, Method]) -> None:
        self.host = host
        self.methods = methods

    def opened(self, connection: Connection) -> None:
        self.host.connected(connection)

    async def request(self, connection: Connection, request: rpc.Request) -> Any:
        method = self.methods.get(request.method)
        if method is None:
            raise rpc.RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if not connection.initialized and request.method not in BEFORE_INITIALIZE:
            raise rpc.invalid_request("Not initialized")
        try:
            return await method(connection, request.params)
        except DoorError as exc:
            raise rpc.invalid_params(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise rpc.invalid_params(f"Invalid params for {request.method}: {exc}") from None

    async def notified(self, connection: Connection, notification: rpc.Notification) -> None:
        pass  # `initialized` and anything else a client tells us need no answer

    def closed(self, connection: Connection) -> None:
        self.host.disconnected(connection)


def text_param(params: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = params.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise rpc.invalid_params(f"{name} must be a non-empty string")
    return value

"""In-process MCP servers of the SDK host (``--mcp-config`` entries of ``"type": "sdk"``): the
server runs in the host program, and each JSON-RPC message travels as an ``mcp_message`` control
request whose answer carries the server's ``mcp_response``. To the session it is one more MCP
server (mcp/), connected through this transport instead of a process or a URL."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from agent_cli.mcp.config import ServerSpec
from agent_cli.stream_json.channel import Channel


def host_server_spec(name: str, channel: Channel) -> ServerSpec:
    return ServerSpec(
        name=name,
        transport="sdk",
        origin="--mcp-config (the SDK host's own server)",
        scope="sdk",
        host_transport=lambda: host_transport(name, channel),
    )


@contextlib.asynccontextmanager
async def host_transport(name: str, channel: Channel) -> AsyncIterator[tuple[Any, Any]]:
    """The MCP SDK's transport shape: a read stream and a write stream of session messages."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    to_client, read_stream = anyio.create_memory_object_stream(16)
    write_stream, from_client = anyio.create_memory_object_stream(16)

    async def forward(message: dict[str, Any]) -> None:
        try:
            answer = (await channel.request({"subtype": "mcp_message", "server_name": name, "message": message})).get(
                "mcp_response"
            )
        except Exception as exc:  # noqa: BLE001 - the host could not answer: this request fails
            answer = {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32603, "message": str(exc)}}
        if "id" not in message or "method" not in message or not isinstance(answer, dict):
            return  # a notification: the host only acknowledged it
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_client.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(answer)))

    async def pump(group) -> None:
        async with from_client:
            async for session_message in from_client:
                data = json.loads(session_message.message.model_dump_json(by_alias=True, exclude_unset=True))
                group.start_soon(forward, data)

    async with anyio.create_task_group() as group:
        group.start_soon(pump, group)
        try:
            yield read_stream, write_stream
        finally:
            group.cancel_scope.cancel()
            for stream in (to_client, read_stream, write_stream, from_client):
                await stream.aclose()

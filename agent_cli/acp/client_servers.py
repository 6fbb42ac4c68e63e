"""MCP servers the editor passes in session/new and session/load, as our server specs: they run
beside the user's own servers, for this session only."""

from __future__ import annotations

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from agent_cli.mcp.config import ServerSpec

ORIGIN = "the editor (ACP session/new)"


def server_specs(servers: list) -> list[ServerSpec]:
    specs = []
    for server in servers:
        if isinstance(server, McpServerStdio):
            specs.append(
                ServerSpec(
                    server.name,
                    "stdio",
                    ORIGIN,
                    scope="client",
                    command=server.command,
                    args=tuple(server.args),
                    env={v.name: v.value for v in server.env},
                )
            )
        elif isinstance(server, (HttpMcpServer, SseMcpServer)):
            transport = "sse" if isinstance(server, SseMcpServer) else "http"
            specs.append(
                ServerSpec(
                    server.name,
                    transport,
                    ORIGIN,
                    scope="client",
                    url=server.url,
                    headers={h.name: h.value for h in server.headers},
                )
            )
    return specs

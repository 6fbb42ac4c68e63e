"""A demo MCP server built with the SDK's MCPServer: every behaviour the client tests need.

Run over stdio: ``python -m tests.mcp_servers.demo_server [--tools N]``. ``build_server()`` is also
served over streamable HTTP by the tests (in a thread, on 127.0.0.1).

Tools: echo (text), add (structured content only), pixel (an image), fail (isError), slow
(sleeps), crash (the process exits mid-call), grow (adds a tool and sends list_changed), and
``--tools N`` generated tools ``gen_0`` … ``gen_{N-1}``. A prompt ``review`` with arguments and a
text resource ``demo://notes`` and a binary one ``demo://logo``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import signal
import sys
import time

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build_server(generated_tools: int = 0) -> MCPServer:
    server = MCPServer("demo")

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool()
    def add(a: int, b: int) -> types.CallToolResult:
        """Add two numbers; the sum comes back as structured content only."""
        return types.CallToolResult(content=[], structured_content={"sum": a + b})

    @server.tool()
    def pixel() -> types.CallToolResult:
        """A 1x1 PNG image."""
        data = base64.b64encode(PIXEL_PNG).decode()
        return types.CallToolResult(content=[types.ImageContent(type="image", data=data, mime_type="image/png")])

    @server.tool()
    def fail(reason: str = "it broke") -> str:
        """Always fails."""
        raise ValueError(reason)

    @server.tool()
    async def slow(seconds: float = 30) -> str:
        """Sleep, then answer."""
        sys.stderr.write("demo server: slow call started\n")  # tests wait for it in the server's log
        sys.stderr.flush()
        await asyncio.sleep(seconds)
        return "finally"

    @server.tool()
    def crash() -> str:
        """The server process dies in the middle of the call."""
        sys.stderr.write("demo server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool named `grown` and tell the client its tool list changed."""

        def grown() -> str:
            """A tool added at run time."""
            return "grown!"

        server.add_tool(grown)
        await ctx.session.send_tool_list_changed()
        return "added a tool"

    for index in range(generated_tools):

        def generated(query: str, limit: int = 10, index: int = index) -> str:
            return f"generated tool {index} got {query!r}"

        server.add_tool(
            generated,
            name=f"gen_{index}",
            description=f"Generated tool number {index}: looks up widget_{index} records by query.",
        )

    @server.prompt()
    def review(path: str, focus: str = "bugs") -> str:
        """Ask for a review of a file."""
        return f"Please review {path}, focusing on {focus}."

    @server.resource("demo://notes", mime_type="text/plain")
    def notes() -> str:
        """Release notes."""
        return "version 2 adds widgets"

    @server.resource("demo://logo", mime_type="image/png")
    def logo() -> bytes:
        """The logo."""
        return PIXEL_PNG

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=0, help="also offer this many generated tools")
    parser.add_argument("--start-delay", type=float, default=0, help="seconds to wait before serving (a slow server)")
    parser.add_argument("--stubborn", action="store_true", help="ignore SIGTERM and keep running after stdin's EOF")
    args = parser.parse_args()
    if args.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(args.start_delay)
    sys.stderr.write(f"demo server {os.getpid()} starting\n")
    sys.stderr.flush()
    build_server(args.tools).run("stdio")
    while args.stubborn:
        time.sleep(1)


if __name__ == "__main__":
    main()

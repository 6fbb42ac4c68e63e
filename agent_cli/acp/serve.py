"""The connection: stdin and the saved stdout as asyncio streams, the agent on them, and every
session (with its commands and servers) closed when the client goes away."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any, BinaryIO, cast

from acp import Agent, run_agent
from acp.stdio import stdio_streams

from agent_cli.acp.agent import AcpAgent
from agent_cli.acp.line_filter import filter_lines
from agent_cli.hangup import watch_for_hangup

STREAM_LIMIT = 50 * 1024 * 1024  # one JSON-RPC line may carry images


async def serve(overrides: list[str], flags: dict[str, Any], protocol_out: BinaryIO, trust: bool = False) -> None:
    loop = asyncio.get_running_loop()
    shown, sys.stdout = sys.stdout, protocol_out  # the library writes to sys.stdout: hand it the saved one
    try:
        reader, writer = await stdio_streams(limit=STREAM_LIMIT)
    finally:
        sys.stdout = shown
    agent = AcpAgent(overrides, flags, trust)
    done = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        loop.add_signal_handler(signum, done.set)
    watch_for_hangup(protocol_out.fileno(), lambda: loop.call_soon_threadsafe(done.set))  # the client closed our output
    messages = asyncio.StreamReader(limit=STREAM_LIMIT)  # only JSON objects: the library chokes on anything else
    filtering = asyncio.ensure_future(filter_lines(reader, messages, writer))
    # The library routes each method by name and answers "method not found" for those an agent
    # leaves out (session/list, fork, resume...); its Protocol lists them all.
    served = asyncio.ensure_future(run_agent(cast(Agent, agent), writer, messages))
    try:
        await asyncio.wait([served, asyncio.ensure_future(done.wait())], return_when=asyncio.FIRST_COMPLETED)
    finally:
        served.cancel()
        filtering.cancel()
        await asyncio.gather(served, filtering, return_exceptions=True)
        await agent.aclose()  # commands, MCP servers and session files end with the connection

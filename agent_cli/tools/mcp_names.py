"""How MCP tools and prompts are named for the model and the user: ``mcp__<server>__<tool>``.

Every provider accepts ``^[A-Za-z0-9_-]{1,64}$`` for a tool name, so other characters become
``_`` and a long name is cut to 64 characters with a short hash that keeps it unique. Nothing
here imports the SDK: front ends use :func:`split_name` to show ``server.tool``.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME = 64
SEARCH_TOOL = "mcp_search"
CALL_TOOL = "mcp_call"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def safe_part(text: str) -> str:
    """``text`` with only the characters providers allow; runs of ``__`` collapse so the
    separator stays unambiguous."""
    cleaned = re.sub(r"_{2,}", "_", _UNSAFE.sub("_", text)).strip("_")
    return cleaned or "x"


def exposed_name(server: str, tool: str, taken: set[str] | None = None) -> str:
    """``mcp__<server>__<tool>``, sanitized, at most 64 characters, not in ``taken``."""
    name = f"{PREFIX}{safe_part(server)}{SEPARATOR}{safe_part(tool)}"
    if len(name) > MAX_NAME or (taken is not None and name in taken):
        digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX) or name in (SEARCH_TOOL, CALL_TOOL)


def split_name(name: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` -> ``("server", "tool")``; None for any other name."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition(SEPARATOR)
    return (server, tool) if sep and server and tool else None


def display_call(name: str, arguments: dict) -> str | None:
    """``server.tool({...})`` for an MCP tool call, None for other tools."""
    parts = split_name(name)
    if parts is None:
        return None
    import json

    args = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    return f"{parts[0]}.{parts[1]}({args})"

"""Turning what goes wrong inside a tool call into words the model can act on.

Paths a model sends can be impossible (a NUL byte, a name longer than the file system allows);
the file system can change under a tool (a directory replaced by a symlink mid-patch). None of
that may end the turn: it becomes the tool's error output.
"""

from __future__ import annotations

import errno
import os

from agent_cli.tools.base import ToolError, ToolResult

NAME_MAX = 255  # bytes in one path component on Linux and macOS file systems
PATH_MAX = 4096  # bytes in a whole path on Linux


def check_path_text(raw: str) -> None:
    """Refuse a path no file system can hold, saying why (before anything touches the disk)."""
    if "\0" in raw:
        raise ToolError(f"the path {shorten(raw)!r} contains a NUL byte, which no file name can hold")
    encoded = os.fsencode(raw)
    if len(encoded) > PATH_MAX:
        raise ToolError(f"the path is {len(encoded)} bytes long; the limit is {PATH_MAX}")
    for part in encoded.split(b"/"):
        if len(part) > NAME_MAX:
            name = shorten(os.fsdecode(part))
            raise ToolError(f"the file name {name!r} is too long: {len(part)} bytes, the limit is {NAME_MAX}")


def shorten(text: str, keep: int = 40) -> str:
    return text if len(text) <= keep else f"{text[:keep]}…({len(text)} characters)"


def describe(exc: BaseException) -> str:
    """``exc`` in words: the system's message for OS errors, never a bare ``[Errno N]``."""
    if isinstance(exc, ToolError):
        return str(exc)
    if isinstance(exc, ValueError) and "null byte" in str(exc):
        return "a path contains a NUL byte, which no file name can hold"
    if isinstance(exc, OSError) and exc.errno is not None:
        what = "a file name is too long" if exc.errno == errno.ENAMETOOLONG else (exc.strerror or str(exc)).lower()
        where = next((shorten(str(name)) for name in (exc.filename, exc.filename2) if name), None)
        return f"{what} ({where})" if where else what
    return f"{type(exc).__name__}: {exc}"


def failure_result(tool: str, exc: BaseException) -> ToolResult:
    """The error output of a tool call that raised ``exc``."""
    if isinstance(exc, ToolError):
        return ToolResult(f"{tool} error: {exc}", success=False)
    return ToolResult(f"{tool} failed: {describe(exc)}", success=False)

"""The ``grep`` tool: regex search over files as ``path:line:text``, with ripgrep or in Python.

Both back ends honour the same ignore rules (see ``ignore.py``), skip binary files (a NUL
byte) and report matches sorted by path (depth first, names in byte order), then line; ``$``
matches before a CRLF. Patterns should use the syntax common to Rust's regex and Python's
``re``: no look-around and no backreferences (rg rejects them; Python accepts them).
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.context.truncate import truncate_text
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import display_path, int_arg, output_policy, relative_arg, str_arg
from agent_cli.tools.daemon_thread import in_thread
from agent_cli.tools.ignore import IgnoreRules, walk_files

DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000  # larger asks are clamped (and the output says so)
LINE_WIDTH = 300  # characters of a matching line shown
RG_MAX_COLUMNS = 2000  # rg stops printing longer lines in full; we cut at LINE_WIDTH anyway

SPEC = ToolSpec(
    name="grep",
    description=(
        "Search file contents with a regex (Rust/ripgrep syntax; no look-around or "
        "backreferences). Respects .gitignore, skips binary files and .git. Returns "
        "`path:line:text` sorted by path, then line; lines cut at 300 chars."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression."},
            "path": {"type": "string", "description": "File or directory to search (default: cwd)."},
            "include": {"type": "string", "description": "File-name glob, e.g. '*.py' or '*.{ts,tsx}'."},
            "limit": {"type": "integer", "description": f"Max matches shown (default {DEFAULT_LIMIT})."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True, slots=True)
class Match:
    path: str
    line: int
    text: str

    def render(self) -> str:
        text = self.text
        if len(text) > LINE_WIDTH:
            text = text[:LINE_WIDTH] + "…"
        return f"{self.path}:{self.line}:{text}"


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: list[Match]  # the first ``limit``
    total: int  # every match found


def find_rg() -> str | None:
    """``rg`` on PATH, else the one PyPI's ``ripgrep`` put beside our interpreter (pipx, venvs)."""
    found = shutil.which("rg")
    if found:
        return found
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


async def search(
    ctx: ToolContext,
    pattern: str,
    path: str = ".",
    include: str | None = None,
    limit: int = DEFAULT_LIMIT,
    use_rg: bool | None = None,
) -> SearchResult:
    """Search with ripgrep when available (``use_rg=None``) or as forced."""
    target = ctx.resolve(path)
    if not target.exists():
        raise ToolError(f"path not found: {path}")
    if include is not None and "/" in include:
        raise ToolError("include matches file names only (e.g. '*.py'); put directories in path")
    rg = find_rg() if use_rg is not False else None
    if use_rg and rg is None:
        raise ToolError("ripgrep (rg) is not installed")
    if rg is not None:
        return await _search_rg(rg, ctx, pattern, target, include, limit)
    return await in_thread(_search_python, ctx, pattern, target, include, limit)


# --- ripgrep ------------------------------------------------------------------------------------


def _rg_argv(rg: str, ctx: ToolContext, pattern: str, target: Path, include: str | None) -> list[str]:
    argv = [
        rg, "--no-config", "--no-heading", "--with-filename", "--line-number", "--null",
        "--color=never", "--sort=path", "--hidden", "--no-require-git", "--no-ignore-global",
        "--no-ignore-exclude", "--glob=!.git", "--crlf", f"--max-columns={RG_MAX_COLUMNS}",
        "--max-columns-preview", "--regexp", pattern,
    ]  # fmt: skip
    if include:
        # A file type, not --glob: --glob would override .gitignore for matching files.
        argv += ["--type-add", f"include:{include}", "--type", "include"]
    where = relative_arg(ctx, target)
    if where is not None:
        argv += ["--", where]
    return argv


async def _search_rg(
    rg: str, ctx: ToolContext, pattern: str, target: Path, include: str | None, limit: int
) -> SearchResult:
    proc = await asyncio.create_subprocess_exec(
        *_rg_argv(rg, ctx, pattern, target, include),
        cwd=ctx.cwd.resolve(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(_read_capped(proc.stderr, 64 * 1024))
    matches: list[Match] = []
    total = 0
    try:
        while raw := await proc.stdout.readline():
            name, sep, rest = raw.partition(b"\0")
            number, colon, text = rest.partition(b":")
            if not sep or not colon or not number.isdigit():
                continue  # e.g. "binary file matches" notices
            if ctx.read_denied is not None and ctx.read_denied(ctx.resolve(_decode(name))):
                continue  # a Read deny rule hides the file
            total += 1
            if len(matches) < limit:
                matches.append(Match(_decode(name), int(number), _decode(text).rstrip("\r\n")))
        code = await proc.wait()
        stderr = _decode(await stderr_task).strip()
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        stderr_task.cancel()
        raise
    if code == 2 and total == 0 and "regex" in stderr:
        raise ToolError(f"invalid regex {pattern!r}:\n{stderr.removeprefix('rg: ')}")
    if code == 2 and total == 0 and "No files were searched" not in stderr:
        raise ToolError(f"search failed: {stderr or f'rg exit code {code}'}")
    return SearchResult(matches, total)


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Read a stream to its end (so the writer never blocks), keeping the first ``cap`` bytes."""
    kept = bytearray()
    while chunk := await stream.read(64 * 1024):
        kept += chunk[: max(0, cap - len(kept))]
    return bytes(kept)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# --- Python walker ------------------------------------------------------------------------------


def _search_python(ctx: ToolContext, pattern: str, target: Path, include: str | None, limit: int) -> SearchResult:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regex {pattern!r}: {exc}") from None
    if target.is_file():
        files = [target]
    else:
        name_globs = _expand_braces(include) if include else None
        files = [
            f for f in walk_files(target, IgnoreRules(target))
            if name_globs is None or any(fnmatch.fnmatchcase(f.name, g) for g in name_globs)
        ]  # fmt: skip
    if ctx.read_denied is not None:  # a Read deny rule hides these files
        files = [f for f in files if not ctx.read_denied(f.resolve())]
    matches: list[Match] = []
    total = 0
    for file in files:
        found = _search_file(regex, file, limit - len(matches))
        if found is None:
            continue
        count, kept = found
        total += count
        shown = display_path(ctx, file)
        matches += [Match(shown, number, text) for number, text in kept]
    return SearchResult(matches, total)


def _search_file(regex: re.Pattern[str], file: Path, keep: int) -> tuple[int, list[tuple[int, str]]] | None:
    """Matches in one file, line by line; None when it is binary (a NUL anywhere) or unreadable."""
    count = 0
    kept: list[tuple[int, str]] = []
    try:
        with open(file, "rb") as f:
            for number, raw in enumerate(f, start=1):
                if b"\0" in raw:
                    return None
                line = _decode(raw).removesuffix("\n").removesuffix("\r")
                if regex.search(line):
                    count += 1
                    if len(kept) < keep:
                        kept.append((number, line))
    except OSError:
        return None
    return count, kept


def _expand_braces(glob: str) -> list[str]:
    """``*.{ts,tsx}`` -> ``['*.ts', '*.tsx']`` (nested braces too)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return [glob]
    head, tail = glob[: match.start()], glob[match.end() :]
    return [x for part in match.group(1).split(",") for x in _expand_braces(head + part + tail)]


# --- the tool -----------------------------------------------------------------------------------


def format_result(result: SearchResult, limit: int) -> str:
    if result.total == 0:
        return "No matches found."
    lines = [m.render() for m in result.matches]
    left_out = result.total - len(result.matches)
    if left_out > 0:
        lines.append(f"[{left_out} more matches not shown (limit {limit}); narrow the pattern or path]")
    return "\n".join(lines)


class GrepTool(Tool):
    spec = SPEC
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("pattern must be a non-empty string")
        path = str_arg(args, "path") if "path" in args else "."
        include = args.get("include") or None
        notes: list[str] = []
        limit = int_arg(args, "limit", DEFAULT_LIMIT, maximum=MAX_LIMIT, notes=notes)
        result = await search(ctx, pattern, path, include, limit)
        text = "\n".join([format_result(result, limit), *notes])
        return ToolResult(truncate_text(text, output_policy(ctx)))

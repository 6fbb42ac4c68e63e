"""The ``lsp`` tool: go to definition, find references, hover, document and workspace symbols,
asked of the language server for the file. Listed only while a server runs; output bounded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_cli.lsp.client import LanguageServer, path_of
from agent_cli.lsp.documents import read_text
from agent_cli.lsp.manager import LspManager
from agent_cli.lsp.servers import language_of
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult

OPERATIONS = ("definition", "references", "hover", "document_symbols", "workspace_symbols")
MAX_RESULTS = 50
MAX_HOVER_CHARS = 3_000
REQUEST_TIMEOUT = 20.0
INDEXING_GRACE = 15.0  # seconds after its start in which an empty workspace search is asked again
SYMBOL_KINDS = {
    5: "class", 6: "method", 7: "property", 8: "field", 9: "constructor", 10: "enum", 11: "interface",
    12: "function", 13: "variable", 14: "constant", 22: "enum member", 23: "struct", 26: "type parameter",
}  # fmt: skip

SPEC = ToolSpec(
    name="lsp",
    description=(
        "Ask the project's language server: definition, references or hover of the symbol at a "
        "position (path, 1-based line, and column or symbol: its name on that line), the symbols "
        "of a file (document_symbols), or symbols matching a query in the workspace (workspace_symbols)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "path": {"type": "string", "description": "The file (for workspace_symbols: any file of its language)."},
            "line": {"type": "integer", "description": "1-based line."},
            "column": {"type": "integer", "description": "1-based column; or give symbol."},
            "symbol": {"type": "string", "description": "The name at that line (its first occurrence)."},
            "query": {"type": "string", "description": "workspace_symbols: part of a name."},
        },
        "required": ["operation", "path"],
        "additionalProperties": False,
    },
)


class LspTool(Tool):
    spec = SPEC
    read_only = True

    def __init__(self, manager: LspManager, start: Any = None):
        self.manager = manager
        self._start = start  # CodeChecks.start: the project's servers start when the list is first read
        self._seen_running = False

    @property
    def listed(self) -> bool:  # type: ignore[override]
        """Once a server runs, and from then on: a tool list that changes back and forth would
        cost the prompt cache each time (a call while none runs says so)."""
        if self._start is not None:
            self._start()
        self._seen_running = self._seen_running or bool(self.manager.running)
        return self._seen_running

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        operation = args["operation"]
        path = ctx.resolve(str(args["path"]))
        hidden = ctx.read_denied or (lambda path: None)  # a Read deny rule hides a file here too
        if hidden(path):
            raise ToolError(f"{args['path']} is hidden by a Read deny rule")
        if language_of(path) is None:
            raise ToolError(f"no language server for {path.suffix or 'files without an extension'}")
        server = await self.manager.server_for(path, REQUEST_TIMEOUT)
        if server is None:
            raise ToolError(f"no language server is running for {path.name} (see /status)")
        if operation == "workspace_symbols":
            query = {"query": str(args.get("query") or "")}
            result = await server.request("workspace/symbol", query, REQUEST_TIMEOUT)
            # A server that has just started may not have indexed the workspace yet: ask again a little later.
            while not result and time.monotonic() - server.ready_at < INDEXING_GRACE:
                await asyncio.sleep(1.0)
                result = await server.request("workspace/symbol", query, REQUEST_TIMEOUT)
            return ToolResult(self._symbols(result or [], hidden, flat=True))
        text = read_text(path)
        if text is None:
            raise ToolError(f"cannot read {args['path']}")
        await self._show(server, path, text)
        document = {"textDocument": {"uri": path.resolve().as_uri()}}
        if operation == "document_symbols":
            result = await server.request("textDocument/documentSymbol", document, REQUEST_TIMEOUT)
            return ToolResult(self._symbols(result or [], hidden, flat=False, path=path))
        position = {**document, "position": self._position(text, args)}
        if operation == "hover":
            result = await server.request("textDocument/hover", position, REQUEST_TIMEOUT)
            return ToolResult(hover_text(result))
        if operation == "references":
            position["context"] = {"includeDeclaration": True}
        method = "textDocument/definition" if operation == "definition" else "textDocument/references"
        result = await server.request(method, position, REQUEST_TIMEOUT)
        return ToolResult(self._locations(result, hidden))

    async def _show(self, server: LanguageServer, path: Path, text: str) -> None:
        """The server answers about what it was shown: the disk's text, if it has another."""
        known = server.documents.get(path.resolve().as_uri())
        if known is None or known[1] != text:
            await server.sync(path, text, language_of(path) or "")

    @staticmethod
    def _position(text: str, args: dict[str, Any]) -> dict[str, int]:
        if not isinstance(args.get("line"), int):
            raise ToolError("give line (1-based) and column or symbol")
        lines = text.split("\n")
        line = args["line"]
        if not 1 <= line <= len(lines):
            raise ToolError(f"line {line} is outside the file (1-{len(lines)})")
        if isinstance(args.get("column"), int):
            return {"line": line - 1, "character": max(0, args["column"] - 1)}
        symbol = str(args.get("symbol") or "")
        column = lines[line - 1].find(symbol) if symbol else -1
        if column < 0:
            raise ToolError(f"{symbol!r} is not on line {line}: give column" if symbol else "give column or symbol")
        return {"line": line - 1, "character": column}

    def _locations(self, result: Any, hidden: Callable[[Path], Any]) -> str:
        items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
        lines = []
        for item in items:
            uri = item.get("uri") or item.get("targetUri")
            where = item.get("range") or item.get("targetSelectionRange") or {}
            start = where.get("start") or {}
            path = path_of(uri) if isinstance(uri, str) else None
            if path is None or not isinstance(start.get("line"), int) or hidden(path):
                continue
            text = read_text(path) or ""
            source = text.split("\n")[start["line"]].strip() if start["line"] < text.count("\n") + 1 else ""
            lines.append(f"{self._shown(path)}:{start['line'] + 1}:{start.get('character', 0) + 1}: {source[:200]}")
        return bounded(lines, "no results")

    def _symbols(self, result: list[Any], hidden: Callable[[Path], Any], flat: bool, path: Path | None = None) -> str:
        lines: list[str] = []

        def walk(symbols: list[Any], depth: int) -> None:
            for symbol in symbols:
                if not isinstance(symbol, dict) or len(lines) > MAX_RESULTS * 4:
                    continue
                kind = SYMBOL_KINDS.get(symbol.get("kind", 0), "symbol")
                where = symbol.get("location") or {}
                start = ((symbol.get("selectionRange") or where.get("range") or {}).get("start")) or {}
                line = start.get("line", 0) + 1
                in_file = path_of(where["uri"]) if flat and isinstance(where.get("uri"), str) else path
                if in_file is not None and hidden(in_file):
                    continue
                place = f"{self._shown(in_file)}:{line}" if in_file else f"line {line}"
                lines.append(f"{'  ' * depth}{kind} {symbol.get('name')}  ({place})")
                walk(symbol.get("children") or [], depth + 1)

        walk(result, 0)
        return bounded(lines, "no symbols")

    def _shown(self, path: Path) -> str:
        root = self.manager.settings.project_root
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def hover_text(result: Any) -> str:
    contents = (result or {}).get("contents") if isinstance(result, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    texts = [part.get("value", "") if isinstance(part, dict) else str(part) for part in parts if part]
    text = "\n\n".join(t for t in texts if t).strip()
    if len(text) > MAX_HOVER_CHARS:
        text = text[:MAX_HOVER_CHARS] + "\n…(cut)"
    return text or "no hover information"


def bounded(lines: list[str], empty: str) -> str:
    if not lines:
        return empty
    shown = lines[:MAX_RESULTS]
    more = f"\n…{len(lines) - MAX_RESULTS} more not shown" if len(lines) > MAX_RESULTS else ""
    return "\n".join(shown) + more

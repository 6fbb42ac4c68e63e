"""The session's language servers: which one speaks for a file, started once per server and
workspace root, restarted after a crash, ended with the session; what an edit made them report.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.events import FileChange
from agent_cli.lsp.client import LanguageServer, path_of
from agent_cli.lsp.diagnostics import Diagnostic, from_lsp, ordered, render
from agent_cli.lsp.documents import read_text, text_before
from agent_cli.lsp.servers import LspSpec, find_root, language_of, servers_for
from agent_cli.sandbox.policy import SandboxPolicy

MAX_STARTS = 3  # a server that keeps crashing is left out after this many starts
MAX_MISSES = 3  # edits in a row a server let pass without diagnostics before it counts as hung
# What the project root holding one of these says about the languages it is written in: their
# servers start with the session, so the `lsp` tool is there before the first edit.
PROJECT_LANGUAGES = {
    "pyproject.toml": "python",
    "setup.py": "python",
    "package.json": "typescript",
    "tsconfig.json": "typescript",
    "go.mod": "go",
    "Cargo.toml": "rust",
    "compile_commands.json": "cpp",
}


@dataclass
class LspSettings:
    """What the manager needs of the config, as plain values (runtime.py reads the config)."""

    specs: list[LspSpec]
    project_root: Path  # files outside it are not sent to a server
    wait: float  # seconds an edit waits for diagnostics, server start included
    token_limit: int  # of the block an edit's output gets
    env: Mapping[str, str] | None
    log_dir: Path
    sandbox: SandboxPolicy | None = None
    which: Callable[[str], str | None] | None = None  # shutil.which unless a test names its own


@dataclass
class EditReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)  # the new ones
    servers: list[str] = field(default_factory=list)
    waited: float = 0.0
    text: str = ""  # what the model reads ("" when nothing is new)


class LspManager:
    def __init__(self, settings: LspSettings):
        self.settings = settings
        self.servers: dict[tuple[str, Path], LanguageServer] = {}
        # per server and file: the diagnostics already reported (or there before the first edit)
        self.known: dict[tuple[str, Path], set[tuple]] = {}
        self.reported_tokens = 0  # what diagnostics added to the model's context (for /context)
        self.totals = {"errors": 0, "warnings": 0}  # new problems reported this session (the status bar)
        self._closed = False

    # --- servers ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the servers of the project's own languages (its root's markers) in the background."""
        root = self.settings.project_root
        languages = {language for marker, language in PROJECT_LANGUAGES.items() if (root / marker).exists()}
        for language in sorted(languages):
            for spec in servers_for(language, self.settings.specs, *self._which()):
                self._server(spec, find_root(root / "_", spec.root_markers, root))

    def _which(self) -> tuple[Callable[[str], str | None], ...]:
        return (self.settings.which,) if self.settings.which is not None else ()

    def servers_for_file(self, path: Path) -> list[LanguageServer]:
        language = language_of(path)
        if language is None or self._closed or not path.is_relative_to(self.settings.project_root):
            return []
        servers = []
        for spec in servers_for(language, self.settings.specs, *self._which()):
            server = self._server(spec, find_root(path, spec.root_markers, self.settings.project_root))
            if server is not None:
                servers.append(server)
        return servers

    def _server(self, spec: LspSpec, root: Path) -> LanguageServer | None:
        key = (spec.name, root)
        server = self.servers.get(key)
        if server is None:
            s = self.settings
            server = self.servers[key] = LanguageServer(spec, root, s.env, s.log_dir, s.sandbox)
            server.start()
        elif server.crashed and server.starts < MAX_STARTS:
            server.restart()  # with no documents open: each is shown again
        return server if server.status in ("starting", "ready") else None

    @property
    def running(self) -> list[LanguageServer]:
        return [server for server in self.servers.values() if server.status in ("starting", "ready")]

    async def aclose(self) -> None:
        self._closed = True
        servers, self.servers = list(self.servers.values()), {}
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)

    # --- after an edit ------------------------------------------------------------------

    async def after_edit(self, changes: Iterable[FileChange], cwd: Path) -> EditReport:
        """Show the servers what ``changes`` did and collect what is new, within the wait."""
        started = time.monotonic()
        deadline = started + self.settings.wait
        jobs = []
        for change in changes:
            path = (cwd / change.path).resolve()
            if change.move_to:
                jobs.append(self._closed_file(path))
                path = (cwd / change.move_to).resolve()
                change = FileChange(change.move_to, "add")
            if change.kind == "delete":
                jobs.append(self._closed_file(path))
                continue
            for server in self.servers_for_file(path):
                jobs.append(self._edited(server, path, change, deadline))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        report = EditReport(waited=time.monotonic() - started)
        found: list[Diagnostic] = []
        for result in results:
            if isinstance(result, tuple):
                name, diagnostics = result
                report.servers.append(name)
                found += diagnostics
        report.diagnostics = ordered(found)
        if report.diagnostics:
            report.text = render(report.diagnostics, report.servers, self.settings.token_limit)
            self.reported_tokens += len(report.text) // 4
            for diagnostic in report.diagnostics:
                self.totals["errors" if diagnostic.severity == 1 else "warnings"] += 1
        return report

    async def _closed_file(self, path: Path) -> None:
        self.known = {key: keys for key, keys in self.known.items() if key[1] != path}
        for server in list(self.servers.values()):
            if server.status == "ready":
                with contextlib.suppress(Exception):
                    await server.sync(path, None, "")

    async def _edited(
        self, server: LanguageServer, path: Path, change: FileChange, deadline: float
    ) -> tuple[str, list[Diagnostic]] | None:
        if not await server.wait_ready(max(0.0, deadline - time.monotonic())):
            return None  # still starting: it is warm for the next edit
        text = read_text(path)
        if text is None:
            return None
        language = language_of(path) or ""
        uri = path.resolve().as_uri()
        seen = (server.spec.name, path)
        if seen not in self.known and uri in server.documents:  # opened for the lsp tool: its list then
            version, old = server.documents[uri]
            shown = server.published.get(uri)
            if shown is None:
                await server.diagnostics_after(path, (0, version), max(0.0, deadline - time.monotonic()))
                shown = server.published.get(uri)
            self.known[seen] = {d.key for d in self._convert(shown.items if shown else [], path, old, server.spec.name)}
        elif seen not in self.known and change.kind == "update":
            # First sight of this file: what the server says of it before the edit is not news.
            before = text_before(text, change.diff)
            if before is not None:
                mark = await server.sync(path, before, language)
                raw = await server.diagnostics_after(path, mark, max(0.0, deadline - time.monotonic()))
                self.known[seen] = {d.key for d in self._convert(raw or [], path, before, server.spec.name)}
        mark = await server.sync(path, text, language)
        raw = await server.diagnostics_after(path, mark, max(0.0, deadline - time.monotonic()))
        if raw is None:
            server.misses += 1
            if server.misses >= MAX_MISSES:  # it answers nothing: started again at the next edit, or left out
                server.give_up(f"published no diagnostics for {MAX_MISSES} edits in a row")
            return None
        server.misses = 0
        current = self._convert(raw, path, text, server.spec.name)
        known = self.known.get(seen, set())
        self.known[seen] = {d.key for d in current}
        return server.spec.name, [d for d in current if d.key not in known]

    def _convert(self, raw: list[Any], path: Path, text: str, source: str) -> list[Diagnostic]:
        shown = self._shown(path)
        lines = text.split("\n")
        return [d for d in (from_lsp(item, shown, lines, source) for item in raw) if d is not None]

    def _shown(self, path: Path) -> str:
        root = self.settings.project_root
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    # --- for the lsp tool and /status ----------------------------------------------------

    def current_counts(self) -> tuple[int, int]:
        """Errors and warnings the servers last reported for the edited files (old ones included)."""
        severities = [key[1] for keys in self.known.values() for key in keys]
        return severities.count(1), severities.count(2)

    async def server_for(self, path: Path, timeout: float) -> LanguageServer | None:
        """A ready server for ``path`` (waiting up to ``timeout`` for one that is starting)."""
        for server in self.servers_for_file(path):
            if await server.wait_ready(timeout):
                return server
        return None

    async def any_ready(self, timeout: float) -> LanguageServer | None:
        for server in self.running:
            if await server.wait_ready(timeout):
                return server
        return None

    def status_lines(self) -> list[str]:
        lines = []
        for (name, root), server in sorted(self.servers.items(), key=lambda item: item[0]):
            state = server.status if server.error is None else f"{server.status}: {server.error}"
            restarts = f", restarted {server.starts - 1}x" if server.starts > 1 else ""
            lines.append(f"{name} ({root}): {state}{restarts}")
        return lines


def shown_path(uri: str, root: Path) -> str:
    path = path_of(uri)
    if path is None:
        return uri
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

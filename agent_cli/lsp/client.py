"""One language server process for one workspace root: start it, keep its documents in step with
the disk, collect what it publishes, ask it things.

The process runs in the session's sandbox (as the model's commands do: a server may run the
repository's build scripts) under a supervisor, with the session's scrubbed environment; it ends with the session, and if the agent dies its supervisor ends it. Its
stderr goes to ``$AGENT_HOME/logs/lsp-<name>.log``. Every wait is bounded: a server that hangs
costs the caller its timeout, one that exits fails what waits on it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from agent_cli.lsp.jsonrpc import Connection, ConnectionLost, RpcError
from agent_cli.lsp.servers import LspSpec
from agent_cli.sandbox.policy import SandboxPolicy, command_argv

Status = Literal["starting", "ready", "failed", "stopped"]
INIT_TIMEOUT = 30.0  # initialize may index the project; callers wait less and come back later
STOP_TIMEOUT = 2.0
SETTLE = 0.3  # a server that gives no versions: how long after a list another may follow


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


def path_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


class Published:
    """The latest diagnostics list for one document, and how many lists came for it."""

    __slots__ = ("items", "generation", "version")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.generation = 0
        self.version: int | None = None


class LanguageServer:
    def __init__(
        self, spec: LspSpec, root: Path, env: Mapping[str, str] | None, log_dir: Path, sandbox: SandboxPolicy | None
    ):
        self.spec, self.root, self.sandbox = spec, root, sandbox
        self.env = dict(env if env is not None else os.environ)
        self.log_path = log_dir / f"lsp-{spec.name}.log"
        self.status: Status = "starting"
        self.error: str | None = None
        self.pid: int | None = None  # the supervisor's; the server is its child
        self.starts = 0
        self.ready_at = 0.0  # when it answered initialize (monotonic)
        self.misses = 0  # edits in a row it published nothing for within the wait
        self.capabilities: dict[str, Any] = {}
        self.documents: dict[str, tuple[int, str]] = {}  # uri -> (version, text) as the server has it
        self.published: dict[str, Published] = {}
        self._changed = asyncio.Condition()
        self._process: asyncio.subprocess.Process | None = None
        self._rpc: Connection | None = None
        self._ready: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()  # kept referenced until they end

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the process and its initialize handshake in the background."""
        self.starts += 1
        self.status, self.error = "starting", None
        self.documents, self.published = {}, {}
        self._ready = asyncio.create_task(self._start(), name=f"lsp-{self.spec.name}")

    async def wait_ready(self, timeout: float) -> bool:
        """Whether the server is ready within ``timeout`` seconds (it keeps starting after)."""
        if self._ready is None:
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        return self.status == "ready"

    @property
    def crashed(self) -> bool:
        return self.status == "failed" or (self._rpc is not None and self._rpc.closed.is_set())

    async def _start(self) -> None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("ab") as log:
                self._process = await asyncio.create_subprocess_exec(
                    *command_argv(list(self.spec.command), self.sandbox),  # the session's sandbox
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log,
                    env=self.env,
                    cwd=self.root,
                    limit=1024 * 1024,
                    start_new_session=True,  # its supervisor signals its own group when it cleans up
                )
            self.pid = self._process.pid
            assert self._process.stdout is not None and self._process.stdin is not None
            self._rpc = Connection(self._process.stdout, self._process.stdin, self._notified, self._asked)  # type: ignore[arg-type]
            self._spawn(self._watch(self._rpc))
            result = await self._rpc.request("initialize", self._initialize_params(), INIT_TIMEOUT)
            self.capabilities = (result or {}).get("capabilities") or {}
            await self._rpc.notify("initialized", {})
            if self.spec.settings:
                await self._rpc.notify("workspace/didChangeConfiguration", {"settings": self.spec.settings})
            self.status, self.ready_at = "ready", time.monotonic()
        except FileNotFoundError as exc:
            self._fail(f"command not found: {exc.filename or self.spec.command[0]}")
        except TimeoutError:
            self._fail(f"did not answer initialize within {INIT_TIMEOUT:g} s")
        except (RpcError, OSError) as exc:
            self._fail(str(exc) or type(exc).__name__)

    def _initialize_params(self) -> dict[str, Any]:
        root = uri_of(self.root)
        return {
            # None: in the sandbox's pid namespace our pid names no process, and a server that
            # watches it would exit at once; the supervisor ends it with the agent anyway
            "processId": None,
            "clientInfo": {"name": "agent-cli"},
            "rootUri": root,
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": root, "name": self.root.name}],
            "initializationOptions": self.spec.init_options or None,
            "capabilities": {
                "textDocument": {
                    "synchronization": {"didSave": True, "dynamicRegistration": False},
                    "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
                    "definition": {"linkSupport": False},
                    "references": {},
                    "hover": {"contentFormat": ["plaintext", "markdown"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                },
                "workspace": {"configuration": True, "workspaceFolders": True, "symbol": {}},
                "window": {"workDoneProgress": False},
            },
        }

    def _fail(self, error: str) -> None:
        self.status, self.error = "failed", error

    def give_up(self, why: str) -> None:
        """Count it as crashed (it hangs): the next edit starts it again, or leaves it out."""
        self.misses = 0
        self._fail(why)

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def restart(self) -> None:
        """Start again after a crash; what is left of the old process is reaped in the background."""
        rpc, process, self._rpc, self._process = self._rpc, self._process, None, None
        self._spawn(self._end(rpc, process, polite=False))
        self.start()

    async def stop(self) -> None:
        """shutdown and exit, briefly; then the process (and what it started) is killed."""
        if self._ready is not None and not self._ready.done():  # first, so a process it starts is ours to end
            self._ready.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ready
        rpc, process, self._rpc, self._process = self._rpc, self._process, None, None
        await self._end(rpc, process, polite=self.status == "ready")
        if self.status in ("ready", "starting"):
            self.status = "stopped"

    async def _end(self, rpc: Connection | None, process: asyncio.subprocess.Process | None, *, polite: bool) -> None:
        if rpc is not None and not rpc.closed.is_set() and polite:
            with contextlib.suppress(Exception):
                await rpc.request("shutdown", None, STOP_TIMEOUT)
                await rpc.notify("exit", None)
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()  # the supervisor passes it on, then kills what is left
                try:
                    await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await process.wait()
        if rpc is not None:
            await rpc.aclose()

    # --- what the server sends ----------------------------------------------------------

    def _notified(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics" or not isinstance(params, dict):
            return
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        entry = self.published.setdefault(uri, Published())
        items = params.get("diagnostics")
        entry.items = items if isinstance(items, list) else []
        entry.version = params.get("version") if isinstance(params.get("version"), int) else None
        entry.generation += 1
        self._spawn(self._wake())

    async def _watch(self, rpc: Connection) -> None:
        """A server that exits wakes whoever waits for its diagnostics."""
        await rpc.closed.wait()
        if self._rpc is rpc and self.status != "stopped":
            self._fail("exited unexpectedly")
        await self._wake()

    async def _wake(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _asked(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = (params or {}).get("items") or []
            return [self.spec.setting(item.get("section") if isinstance(item, dict) else None) for item in items]
        if method == "workspace/workspaceFolders":
            return [{"uri": uri_of(self.root), "name": self.root.name}]
        if method in ("client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create"):
            return None
        if method == "window/showMessageRequest":
            return None
        raise LookupError(method)

    # --- documents ----------------------------------------------------------------------

    async def sync(self, path: Path, text: str | None, language: str) -> tuple[int, int]:
        """Tell the server ``path`` now holds ``text`` (None: it was deleted). Returns the
        generation of its diagnostics before this and the document's version, for
        :meth:`diagnostics_after`."""
        rpc = self._connected()
        uri = uri_of(path)
        before = self.published.get(uri, Published()).generation
        if text is None:
            if self.documents.pop(uri, None) is not None:
                await rpc.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            return before, 0
        known = self.documents.get(uri)
        version = 1 if known is None else known[0] + 1
        if known is None:
            self.documents[uri] = (1, text)
            item = {"uri": uri, "languageId": language, "version": 1, "text": text}
            await rpc.notify("textDocument/didOpen", {"textDocument": item})
        else:
            self.documents[uri] = (version, text)
            await rpc.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
            )
        if self._wants_save():
            await rpc.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        return before, version

    def _wants_save(self) -> bool:
        sync = self.capabilities.get("textDocumentSync")
        return isinstance(sync, dict) and bool(sync.get("save"))

    async def diagnostics_after(self, path: Path, mark: tuple[int, int], timeout: float) -> list[Any] | None:
        """The first list published for ``path`` after ``mark`` (from :meth:`sync`; a list for an
        older version does not count), within ``timeout``; None when none came (a slow, hung or
        dead server)."""
        uri = uri_of(path)
        generation, version = mark

        def fresh() -> bool:
            entry = self.published.get(uri)
            return entry is not None and entry.generation > generation and (entry.version or version) >= version

        def arrived() -> bool:
            return fresh() or self.crashed

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(arrived)
                entry = self.published.get(uri)
                # Without a version a list may be for the text before, or one stage of several
                # (TypeScript: syntax, then types): the last of a burst counts.
                while entry is not None and entry.version is None and not self.crashed:
                    settling, seen = entry, entry.generation
                    try:
                        async with asyncio.timeout(SETTLE):
                            await self._changed.wait_for(lambda: settling.generation > seen or self.crashed)
                    except TimeoutError:
                        break
        entry = self.published.get(uri)
        return entry.items if entry is not None and fresh() else None

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        return await self._connected().request(method, params, timeout)

    def _connected(self) -> Connection:
        if self._rpc is None or self.status != "ready" or self._rpc.closed.is_set():
            raise ConnectionLost(f"{self.spec.name} is not running ({self.error or self.status})")
        return self._rpc

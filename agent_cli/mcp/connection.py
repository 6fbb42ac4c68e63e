"""One MCP server: start it, list what it offers, call its tools, restart it once after a crash.

The connection lives in one background task (the SDK's transports are anyio task groups that
must be entered and left by the same task). That task connects, lists tools, prompts and
resources, reports ready, and then waits until :meth:`ServerConnection.stop`; leaving it closes
the transport, which for a stdio server closes its stdin and kills its process group after a
grace period. The server's stderr goes to ``$AGENT_HOME/logs/mcp-<name>.log``, never to the screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from agent_cli import __version__
from agent_cli import events as ev
from agent_cli.mcp import elicitation
from agent_cli.mcp.config import ServerSpec
from agent_cli.mcp.oauth import is_unauthorized, login_hint, session_auth, uses_oauth
from agent_cli.sandbox.policy import supervised_argv

Status = Literal["starting", "ready", "failed", "stopped"]
STDERR_LINES = 5
MAX_PAGES = 100
EXITED = "exited unexpectedly"  # the error of a server that died; it is restarted once
STOP_TIMEOUT = 8.0  # the SDK closes stdin, waits 2 s, sends SIGTERM, waits 2 s, then SIGKILL


SDK_MODULES = ("mcp.client.client", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse", "mcp_types")


def import_sdk() -> None:
    for module in SDK_MODULES:
        importlib.import_module(module)


class McpCallError(Exception):
    """A call that could not complete; the message is for the model."""


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        log_dir: Path,
        base_env: Mapping[str, str] | None,
        on_change: Callable[[], None] = lambda: None,
    ):
        self.spec = spec
        self.log_path = log_dir / f"mcp-{spec.name}.log"
        self.base_env = base_env
        self.on_change = on_change
        self.status: Status = "starting"
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool, filtered by enabled_tools / disabled_tools
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.instructions: str | None = None
        self.lists_changed: set[str] = set()  # "tools", "prompts", "resources" since the last refresh
        self.restarts = 0
        self.needs_login = False  # an OAuth server without a (valid) stored login: skipped until one
        self.can_ask = False  # the front end shows elicitation forms (the manager's setting)
        self.callers: list[Callable[[ev.Event], None]] = []  # the emit of each call in progress
        self._call_scopes: list[Any] = []  # their timeouts, paused while the user answers a form
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._log_offset = 0
        self._scope: Any = None  # the anyio cancel scope around the connection
        self._auth: Any = None  # the OAuth login the HTTP transport sends (mcp/oauth.py), if any

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self.status, self.error, self.needs_login = "starting", None, False
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.spec.name}")

    async def wait_ready(self) -> None:
        """Until the server is ready or failed (at most ``startup_timeout_sec`` once the SDK is loaded)."""
        await self._ready.wait()

    def _startup_expired(self) -> None:
        """The startup clock ran out: the server counts as failed now, while its task stops it."""
        if self.status == "starting":
            self._fail(f"did not start within {self.spec.startup_timeout_sec:g} s (startup_timeout_sec)")
            self._ready.set()

    async def stop(self) -> None:
        """Close the connection; a stdio server that ignores it is killed."""
        self._stop.set()
        if self.status == "starting" and self._scope is not None:
            self._scope.cancel()  # do not wait for a server still starting
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
                async with asyncio.timeout(STOP_TIMEOUT):
                    await asyncio.shield(task)
        if self.status in ("ready", "starting"):
            self._set("stopped")

    async def _run(self) -> None:
        try:
            # Importing the SDK takes a second or more: off the event loop, so the TUI stays
            # responsive, and before the startup clock runs.
            await asyncio.to_thread(import_sdk)
            import anyio

            timeout = self.spec.startup_timeout_sec
            watchdog = asyncio.get_running_loop().call_later(timeout, self._startup_expired)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8", errors="replace") as log:
                self._log_offset = log.tell()
                with anyio.CancelScope(deadline=anyio.current_time() + timeout) as self._scope:
                    async with contextlib.AsyncExitStack() as stack:
                        self._client = await self._connect(stack, log)
                        await self._load_lists()
                        self._scope.deadline = math.inf  # started: from now on only stop() ends it
                        watchdog.cancel()
                        if self.status == "starting":
                            self._set("ready")
                            self._ready.set()
                            await self._stop.wait()
                self._startup_expired()
        except Exception as exc:  # noqa: BLE001 - any failure leaves this server out, never the session
            if self.status != "failed" and uses_oauth(self.spec) and is_unauthorized(exc):
                self.needs_login = True
                self._fail(f"needs a login: {login_hint(self.spec.name)}")
            elif self.status != "failed":
                self._fail(describe_error(exc))
        finally:
            self._client = None
            self._ready.set()

    async def _connect(self, stack: contextlib.AsyncExitStack, log) -> Any:
        from mcp.client.client import Client
        from mcp_types import Implementation

        info = Implementation(name="agent-cli", version=__version__)

        def client(transport: Any) -> Any:
            return Client(
                transport,
                mode="legacy",
                client_info=info,
                message_handler=self._notified,
                elicitation_callback=self._elicit,  # announces form and URL elicitation
            )

        if self.spec.transport != "http":
            transport = await self._transport(stack, log, self.spec.transport)
            return await stack.enter_async_context(client(transport))
        try:  # streamable HTTP first; a server that only speaks the older SSE transport gets that
            async with contextlib.AsyncExitStack() as attempt:
                transport = await self._transport(attempt, log, "http")
                connected = await attempt.enter_async_context(client(transport))
                stack.push_async_exit(attempt.pop_all())
                return connected
        except Exception as first:  # noqa: BLE001
            if is_unauthorized(first):
                raise  # a server that wants a login: the older transport would want one too
            try:
                transport = await self._transport(stack, log, "sse")
                return await stack.enter_async_context(client(transport))
            except Exception:  # noqa: BLE001 - the streamable HTTP error says more
                raise first from None

    async def _transport(self, stack: contextlib.AsyncExitStack, log, kind: str) -> Any:
        spec = self.spec
        if spec.host_transport is not None:  # the SDK host's in-process server, over the protocol
            return spec.host_transport()
        if kind == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = {**(self.base_env if self.base_env is not None else os.environ), **spec.env}
            # under the launcher's supervisor: it dies with the agent, and so does what it started
            argv = supervised_argv([spec.command or "", *spec.args])
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=spec.cwd)
            return stdio_client(params, errlog=log)
        headers = dict(spec.headers)
        if spec.bearer_token_env_var:
            token = (self.base_env or {}).get(spec.bearer_token_env_var) or os.environ.get(spec.bearer_token_env_var)
            if not token:
                raise McpCallError(f"{spec.bearer_token_env_var} is not set (bearer_token_env_var)")
            headers["Authorization"] = f"Bearer {token}"
        if kind == "sse":
            from mcp.client.sse import sse_client

            self._auth = session_auth(spec)
            return sse_client(spec.url or "", headers=headers, auth=self._auth)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        self._auth = session_auth(spec)  # the stored OAuth login, refreshed as needed; never a browser here
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers, auth=self._auth))
        return streamable_http_client(spec.url or "", http_client=http)

    async def _load_lists(self) -> None:
        client = self._client
        capabilities = client.server_capabilities
        self.instructions = getattr(client, "instructions", None)
        self.tools = [tool for tool in await _all_pages(client.list_tools, "tools") if self.spec.offers(tool.name)]
        self.prompts = await _optional_list(client.list_prompts, "prompts") if capabilities.prompts else []
        self.resources = await _optional_list(client.list_resources, "resources") if capabilities.resources else []

    async def refresh(self) -> bool:
        """Re-list what a ``list_changed`` notification said changed; True if the tools did."""
        changed, self.lists_changed = self.lists_changed, set()
        if self.status != "ready" or not changed:
            return False
        client = self._client
        with contextlib.suppress(Exception):
            if "tools" in changed:
                self.tools = [
                    tool for tool in await _all_pages(client.list_tools, "tools") if self.spec.offers(tool.name)
                ]
            if "prompts" in changed:
                self.prompts = await _optional_list(client.list_prompts, "prompts")
            if "resources" in changed:
                self.resources = await _optional_list(client.list_resources, "resources")
        self.on_change()
        return "tools" in changed

    async def _elicit(self, context: Any, params: Any) -> Any:
        """The server asks the user: the call in progress's front end shows it; its timeout waits."""
        import anyio

        emit = self.callers[-1] if self.callers else None
        deadlines = [scope.deadline for scope in self._call_scopes]
        started = anyio.current_time()
        for scope in self._call_scopes:
            scope.deadline = math.inf
        try:
            return await elicitation.ask(self.spec.name, params, emit, self.can_ask, self.spec.elicitation_values)
        finally:
            waited = anyio.current_time() - started
            for scope, deadline in zip(self._call_scopes, deadlines, strict=False):
                scope.deadline = deadline + waited

    async def _notified(self, message: Any) -> None:
        method = getattr(message, "method", "")
        for kind in ("tools", "prompts", "resources"):
            if method == f"notifications/{kind}/list_changed":
                self.lists_changed.add(kind)

    # --- calls --------------------------------------------------------------------------

    async def request(
        self,
        what: str,
        call: Callable[[Any], Any],
        timeout: float | None = None,
        emit: Callable[[ev.Event], None] | None = None,
    ) -> Any:
        """Run ``call(client)``; a server that crashed earlier is restarted once first. ``emit``: the
        front end of the call, where the server's questions (elicitation) are asked."""
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        await self._restart_if_crashed()
        if self.status != "ready" or self._client is None:
            raise McpCallError(
                f"MCP server {self.spec.name!r} is not available ({self.status}: {self.error or 'not ready'})"
            )
        try:
            with anyio.fail_after(timeout if timeout is not None else self.spec.tool_timeout_sec) as scope:
                self._call_scopes.append(scope)
                if emit is not None:
                    self.callers.append(emit)
                try:
                    return await call(self._client)
                finally:
                    self._call_scopes.remove(scope)
                    if emit is not None:
                        self.callers.remove(emit)
        except TimeoutError:
            limit = timeout if timeout is not None else self.spec.tool_timeout_sec
            raise McpCallError(
                f"{what} did not finish within {limit:g} s (tool_timeout_sec); it was cancelled"
            ) from None
        except MCPError as exc:
            if getattr(self._auth, "login_required", False):  # the login was revoked or expired
                await self._login_lost()
                raise McpCallError(f"{what} failed: MCP server {self.spec.name!r} {self.error}") from None
            if exc.code != CONNECTION_CLOSED:
                raise McpCallError(f"{what} failed: {exc.message}") from None
            await self._lost()
            raise McpCallError(
                f"{what} failed: the MCP server {self.spec.name!r} exited during the call{self.stderr_hint()}. "
                "It will be restarted on the next call."
            ) from None

    async def _restart_if_crashed(self) -> None:
        if self.status == "failed" and self.error == EXITED and self.restarts < 1:
            self.restarts += 1
            self.start()
            await self.wait_ready()

    async def _login_lost(self) -> None:
        """Left out until a login (``/mcp login``), never restarted on its own."""
        self.needs_login = True
        self._fail(f"needs a login: {login_hint(self.spec.name)}")
        await self.stop()

    async def _lost(self) -> None:
        self._fail(EXITED)
        await self.stop()  # reaps the process and closes the transport

    # --- state --------------------------------------------------------------------------

    def _set(self, status: Status) -> None:
        self.status = status
        self.on_change()

    def _fail(self, error: str) -> None:
        self.error = error
        self._set("failed")

    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr in this run."""
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(self._log_offset)
                text = handle.read()[-8192:].decode("utf-8", "replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-STDERR_LINES:]

    def stderr_hint(self) -> str:
        tail = self.stderr_tail()
        return f" (stderr: {' | '.join(tail)})" if tail else ""


async def _all_pages(method: Callable[..., Any], field: str) -> list[Any]:
    from mcp_types import PaginatedRequestParams

    items: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await method(params=PaginatedRequestParams(cursor=cursor)) if cursor else await method()
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def _optional_list(method: Callable[..., Any], field: str) -> list[Any]:
    """Prompts and resources are extras: a server that fails to list them still runs."""
    try:
        return await _all_pages(method, field)
    except Exception:  # noqa: BLE001
        return []


def describe_error(exc: BaseException) -> str:
    """One line for a start failure (exception groups from task groups are unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__

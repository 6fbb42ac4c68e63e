"""OAuth for HTTP MCP servers, on the SDK's own client (``mcp.client.auth.OAuthClientProvider``).

The SDK does the protocol: discovery from the 401 (protected-resource metadata, then the
authorization server's metadata), dynamic client registration, authorization code with PKCE and
``resource``, refresh before expiry. What is ours:

- the storage (:class:`agent_cli.mcp.token_store.TokenFile`, 0600 under ``$AGENT_HOME``);
- a login (:func:`login`) listens on 127.0.0.1 (a random port, or the one the stored registration
  names), opens the browser with :mod:`webbrowser` (``$BROWSER`` is honoured) and prints the URL;
- a session's connection never opens a browser: with no stored login a 401 marks the server as
  needing one, and a token the server rejects is refreshed once; when that fails too the server
  needs a login again (:class:`LoginRequired`). So ``agent exec`` never waits for a person.

The SDK is imported inside functions: importing this module costs a session without servers nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agent_cli import __version__
from agent_cli.mcp.config import ServerSpec
from agent_cli.mcp.token_store import TokenFile
from agent_cli.paths import agent_home

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT = 300.0
REFRESH_MARGIN = 30.0  # refresh this long before the access token expires, not after a rejection
DONE_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>agent-cli</title><p>Signed in. You can close this window and return to the terminal.</p>"
)


class LoginRequired(Exception):
    """The server wants a login the agent cannot do here without asking (the message says how)."""


def login_hint(name: str) -> str:
    return f"run `agent mcp login {name}` (or /mcp login {name} in the TUI)"


def uses_oauth(spec: ServerSpec) -> bool:
    """An HTTP server that brings its own credentials (a bearer token, an Authorization header) logs in no other way."""
    if spec.transport not in ("http", "sse") or spec.host_transport is not None or spec.bearer_token_env_var:
        return False
    return not any(key.lower() == "authorization" for key in spec.headers)


def token_file(spec: ServerSpec) -> TokenFile:
    return TokenFile(agent_home(), spec.url or "")


def is_unauthorized(exc: BaseException) -> bool:
    """Whether a connection failed on an HTTP 401 (somewhere in its exception groups and causes)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, LoginRequired):
            return True
        response = getattr(current, "response", None)
        if getattr(response, "status_code", None) == 401 or "401 Unauthorized" in str(current):
            return True
        if isinstance(current, BaseExceptionGroup):
            stack += current.exceptions
        stack += [e for e in (current.__cause__, current.__context__) if e is not None]
    return False


# --- the SDK's provider, with our storage and our rules ---------------------------------------


class _Storage:
    """The SDK's ``TokenStorage`` over a :class:`TokenFile`; a client id from config wins over a registration."""

    def __init__(self, spec: ServerSpec, file: TokenFile, redirect_uri: str):
        self.spec, self.file, self.redirect_uri = spec, file, redirect_uri

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        data = self.file.tokens()
        return OAuthToken.model_validate(data) if data else None

    async def set_tokens(self, tokens: Any) -> None:
        self.file.set_tokens(tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull
        from pydantic import AnyUrl

        if self.spec.oauth_client_id:  # pre-registered: nothing to register
            return OAuthClientInformationFull(
                client_id=self.spec.oauth_client_id,
                redirect_uris=[AnyUrl(self.redirect_uri)],
                token_endpoint_auth_method="none",
                scope=" ".join(self.spec.oauth_scopes) or None,
            )
        data = self.file.read().get("client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: Any) -> None:
        if not self.spec.oauth_client_id:
            self.file.update(client=client_info.model_dump(mode="json", exclude_none=True))


@functools.cache
def _provider_class() -> type:
    from mcp.client.auth import OAuthClientProvider

    # The SDK logs a failed flow with its traceback; with no logging set up (the TUI, exec) that
    # would reach the terminal. What matters reaches the user as "needs a login" instead.
    logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())

    class Provider(OAuthClientProvider):
        """Refreshes a rejected token once before anything else; never asks unless ``interactive``."""

        def __init__(self, *args: Any, name: str, file: TokenFile, interactive: bool, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.name, self.file, self.interactive = name, file, interactive
            self._refreshing = False
            self.login_required = False  # set when the flow stopped because a login is needed

        async def _initialize(self) -> None:
            await super()._initialize()
            # the SDK keeps the expiry in memory only: ours is stored, so a token loaded from
            # disk is refreshed before it expires rather than sent and rejected
            expires = self.file.expires_at()
            if self.context.current_tokens is not None and expires is not None:
                self.context.token_expiry_time = expires - self.margin()

        def margin(self) -> float:
            lifetime = self.context.current_tokens.expires_in if self.context.current_tokens else None
            return min(REFRESH_MARGIN, float(lifetime or 0) / 2)

        def update_expiry(self) -> None:
            if self.context.token_expiry_time is not None:
                self.context.token_expiry_time -= self.margin()

        async def _perform_authorization(self) -> Any:
            # reached on a 401 (after discovery): a token that was rejected is refreshed first
            if not self._refreshing and self.context.can_refresh_token():
                self._refreshing = True
                return await self._refresh_token()
            if not self.interactive:
                self.login_required = True
                raise LoginRequired(f"MCP server {self.name!r} needs a login: {login_hint(self.name)}")
            return await super()._perform_authorization()

        async def _handle_refresh_response(self, response: Any) -> bool:
            refreshed = await super()._handle_refresh_response(response)
            if refreshed:
                self.update_expiry()
            else:
                self.file.clear_tokens()  # refused: only a new login helps
            return refreshed

        async def _handle_token_response(self, response: Any) -> None:
            refreshing, self._refreshing = self._refreshing, False
            if not refreshing:
                await super()._handle_token_response(response)
                self.update_expiry()
            elif not await self._handle_refresh_response(response):
                self.login_required = True
                raise LoginRequired(
                    f"MCP server {self.name!r}: the login expired or was revoked; {login_hint(self.name)}"
                )

    return Provider


def make_auth(
    spec: ServerSpec,
    redirect_uri: str = "http://127.0.0.1/callback",
    redirect_handler: Callable[[str], Any] | None = None,
    callback_handler: Callable[[], Any] | None = None,
) -> Any:
    """The httpx auth for ``spec``; interactive when the handlers are given (a login)."""
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    file = token_file(spec)
    metadata = OAuthClientMetadata(
        client_name=f"agent-cli {__version__}",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=" ".join(spec.oauth_scopes) or None,
    )
    return _provider_class()(
        spec.url or "",
        metadata,
        _Storage(spec, file, redirect_uri),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        name=spec.name,
        file=file,
        interactive=redirect_handler is not None,
    )


def session_auth(spec: ServerSpec) -> Any | None:
    """What a session's connection sends: the stored login, or nothing (a 401 then means "needs login")."""
    if not uses_oauth(spec) or not token_file(spec).tokens():
        return None
    return make_auth(spec)


# --- a login: loopback listener, browser, the SDK's flow ----------------------------------------


class Loopback:
    """A one-shot HTTP listener on 127.0.0.1 that receives the authorization server's redirect."""

    def __init__(self) -> None:
        self.port = 0
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self, port: int = 0) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass
            parts = line.split()
            target = urlsplit(parts[1]) if len(parts) > 1 else urlsplit("/")
            if target.path != CALLBACK_PATH:
                writer.write(b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n")
                return
            query = {key: values[0] for key, values in parse_qs(target.query).items()}
            writer.write(DONE_PAGE)
            if self._result is not None and not self._result.done():
                self._result.set_result(query)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()

    async def wait(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._result is not None
        try:
            query = await asyncio.wait_for(asyncio.shield(self._result), LOGIN_TIMEOUT)
        except TimeoutError:
            raise LoginRequired(f"the browser did not come back within {LOGIN_TIMEOUT:g} s") from None
        if "error" in query:
            raise LoginRequired(f"the authorization server refused: {query.get('error_description') or query['error']}")
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))


def _stored_port(spec: ServerSpec, file: TokenFile) -> int:
    """The loopback port a registration was made for (its redirect URI must match exactly)."""
    if spec.oauth_callback_port:
        return spec.oauth_callback_port
    uris = (file.read().get("client") or {}).get("redirect_uris") or []
    port = urlsplit(uris[0]).port if uris else None
    return port or 0


async def login(spec: ServerSpec, show: Callable[[str], None], open_browser: bool = True) -> None:
    """Sign in to ``spec``'s server: ``show`` gets the lines for the user (the URL among them)."""
    if not uses_oauth(spec):
        raise LoginRequired(f"MCP server {spec.name!r} is not an HTTP server that logs in with OAuth")
    file = token_file(spec)
    loopback = Loopback()
    port = _stored_port(spec, file)
    try:
        await loopback.start(port)
    except OSError:
        if spec.oauth_callback_port:
            raise LoginRequired(f"cannot listen on 127.0.0.1:{port} (oauth callback_port)") from None
        file.update(client=None)  # its redirect URI names a port taken now: register again
        await loopback.start(0)
    file.clear_tokens()  # a login is a new sign-in, never a silent refresh

    async def redirect(url: str) -> None:
        show(f"Open this URL to sign in to MCP server {spec.name!r}:\n  {url}")
        if open_browser:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(webbrowser.open, url)

    try:
        auth = make_auth(spec, loopback.redirect_uri, redirect, loopback.wait)
        await _initialize(spec, auth)
    finally:
        await loopback.close()


async def _initialize(spec: ServerSpec, auth: Any) -> None:
    """Connect once with ``auth``: the 401 starts the SDK's flow; done when the server answers."""
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp_types import Implementation

    async with create_mcp_http_client(headers=dict(spec.headers), auth=auth) as http:
        transport = streamable_http_client(spec.url or "", http_client=http)
        info = Implementation(name="agent-cli", version=__version__)
        async with Client(transport, mode="legacy", client_info=info):
            pass

"""An MCP server behind OAuth, on the SDK's own server-side auth: one process is both the
authorization server (metadata, dynamic client registration, /authorize with a sign-in form,
/token, /revoke) and the resource server (bearer tokens checked on /mcp, protected-resource
metadata). Served in a thread of the test process, so a test can shorten token lifetimes and
revoke tokens directly.

Tools: ``whoami`` (the signed-in user), ``ask`` (a form elicitation), ``visit`` (a URL-mode
elicitation) and ``grow`` (adds a tool and sends ``notifications/tools/list_changed``).
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlencode

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

SCOPE = "mcp"


@dataclass
class Provider:
    """An in-memory authorization server: the one user signs in with the form at /login."""

    base: str
    token_lifetime: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    pending: dict[str, tuple[str, AuthorizationParams]] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    logins: int = 0  # completed sign-ins through the form
    refreshes: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        session = secrets.token_urlsafe(16)
        self.pending[session] = (client.client_id or "", params)
        return f"{self.base}/login?{urlencode({'session': session})}"

    def sign_in(self, session: str, user: str) -> str:
        """The form was posted: a code for the client's redirect URI."""
        client_id, params = self.pending.pop(session)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=user,
        )
        self.logins += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(client.client_id or "", code.scopes, code.resource, code.subject)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.refreshes += 1
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource, refresh_token.subject
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def revoke_all(self) -> None:
        """What a user revoking the app's access in the provider's settings does."""
        self.access.clear()
        self.refresh.clear()

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, subject: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource, subject=subject
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


class Answer(BaseModel):
    name: str
    count: int = 1


def build_server(base: str) -> tuple[MCPServer, Provider]:
    provider = Provider(base)
    server = MCPServer(
        "oauth-demo",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            required_scopes=[SCOPE],
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.custom_route("/login", methods=["GET"])
    async def login_form(request: Request) -> Response:
        session = request.query_params.get("session", "")
        return HTMLResponse(
            f'<form method="post" action="/login"><input type="hidden" name="session" value="{session}">'
            '<input name="user"><button>Sign in</button></form>'
        )

    @server.custom_route("/login", methods=["POST"])
    async def login_post(request: Request) -> Response:
        form = await request.form()
        session, user = str(form.get("session", "")), str(form.get("user", ""))
        if session not in provider.pending or not user:
            return HTMLResponse("unknown sign-in", status_code=400)
        return RedirectResponse(provider.sign_in(session, user), status_code=302)

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """The signed-in user."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"signed in as {token.subject if token else '?'}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user for a name and a count."""
        result = await ctx.elicit("Who should be greeted?", Answer)
        if result.action == "accept" and result.data is not None:
            return f"hello {result.data.name} x{result.data.count}"
        return f"no answer ({result.action})"

    @server.tool()
    async def visit(ctx: Context) -> str:
        """Send the user to a page."""
        result = await ctx.elicit_url("Confirm on the page", f"{base}/confirm", "e1")
        return f"visit: {result.action}"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool named extra."""

        def extra() -> str:
            """An extra tool."""
            return "extra!"

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server, provider


@contextmanager
def serve_oauth() -> Iterator[tuple[str, Provider]]:
    """Yields the MCP endpoint's URL and the provider (to expire or revoke tokens)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    mcp_server, provider = build_server(base)
    app = mcp_server.streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"{base}/mcp", provider
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

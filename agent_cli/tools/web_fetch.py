"""The ``web_fetch`` tool: GET a URL and show it as Markdown (HTML) or through the file processors.

Safety: http and https only; at most ``MAX_REDIRECTS`` redirects, each checked like the first
URL; ``MAX_BYTES`` and ``TIMEOUT_S`` limits. Every host (each redirect's too) is refused when a
denied domain matches it (network/lists.py), resolved first and refused when any address is
loopback, private, link-local or otherwise not public (unless ``web_fetch_allow_private``, or an
allowed domain names the host exactly, as for commands), and the connection goes to the address
that was checked, so a DNS answer that changes between the check and the request cannot slip
through. Whether the network may be used at all is the sandbox's, the allowed domains' and the
approval policy's call (session/approvals.py): the tool runs with ``ctx.sandbox`` lifted only
when an allowed domain or the user let it fetch from the domain.
"""

from __future__ import annotations

import asyncio
import ipaddress
import mimetypes
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from agent_cli.files.reading import read_view, sniff
from agent_cli.files.view import FileReadError, Reading
from agent_cli.models.base import ToolSpec
from agent_cli.network.addresses import is_public
from agent_cli.network.domains import DomainError, normalize_host
from agent_cli.network.gate import NetworkGate
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.capture import OutputCapture, new_spill_path
from agent_cli.tools.captured_text import format_captured
from agent_cli.tools.common import output_policy, str_arg

MAX_REDIRECTS = 5
MAX_BYTES = 10 * 1024 * 1024
TIMEOUT_S = 30.0
USER_AGENT = "agent-cli web_fetch"
HTML_TYPES = ("text/html", "application/xhtml+xml")

SPEC = ToolSpec(
    name="web_fetch",
    description="GET an http(s) URL: HTML as Markdown, other types (JSON, CSV, PDF...) as read_file shows them.",
    parameters={
        "type": "object",
        "properties": {"url": {"type": "string"}},
        "required": ["url"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True, slots=True)
class WebSettings:
    allow_private: bool = False  # `web_fetch_allow_private`: loopback, private and link-local addresses too


def network_allowed(ctx: ToolContext) -> bool:
    """The sandbox lets this call use the network (full access, network_access, or the user
    approved the domain, which lifts the sandbox for the call)."""
    return ctx.sandbox is None or ctx.sandbox.network_access


def domain_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def check_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, or ToolError."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ToolError(f"not a valid URL: {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {parts.scheme or 'a relative URL'!r}: {url}")
    if not parts.hostname:
        raise ToolError(f"the URL has no host: {url}")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


async def resolve_public(host: str, port: int, allow_private: bool, allow_loopback: bool = False) -> str:
    """An address of ``host`` that may be fetched from; refuses hosts with any non-public address
    (``allow_loopback``: but this machine's own, for the user's http hooks)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ToolError(f"cannot resolve {host}: {exc.strerror}") from None
    addresses = [info[4][0] for info in infos]
    if not allow_private:
        for address in addresses:
            if allow_loopback and ipaddress.ip_address(address.split("%", 1)[0]).is_loopback:
                continue
            if not is_public(address):
                raise ToolError(
                    f"refused: {host} resolves to {address}, a loopback, private or link-local address. "
                    "Fetching internal addresses is off; the user can allow it with web_fetch_allow_private = true."
                )
    return addresses[0]


@dataclass
class Fetched:
    url: str  # after redirects
    status: int
    content_type: str
    body: bytes
    cut: bool  # the body was longer than MAX_BYTES
    charset: str = "utf-8"  # from the Content-Type header

    def text(self) -> str:
        """The body decoded as the server declared (latin-1 pages were shown as replacement characters)."""
        try:
            return self.body.decode(self.charset, "replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", "replace")


def listed_exactly(network: NetworkGate | None, host: str, port: int) -> bool:
    """Refuses a host a denied domain matches; whether an allowed one names it exactly (it may then
    resolve to a private address, as for commands)."""
    if network is None:
        return False
    try:
        name = normalize_host(host)
    except DomainError as exc:
        raise ToolError(f"refused: {exc}") from None
    if (denied := network.lists.denial(name, port)) is not None:
        raise ToolError(f"refused: {name} is denied by {denied.describe()}")
    return network.verdict(name, port).exact


async def fetch(url: str, allow_private: bool, network: NetworkGate | None = None) -> Fetched:
    import httpx2  # with the first fetch, not with the tool list

    async with httpx2.AsyncClient(follow_redirects=False, timeout=TIMEOUT_S, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            scheme, host, port = check_url(url)
            exact = listed_exactly(network, host, port)
            address = await resolve_public(host, port, allow_private or exact)
            request = _pinned_request(client, url, scheme, host, port, address)
            response = await client.send(request, stream=True)
            try:
                if response.status_code in (301, 302, 303, 307, 308) and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                body, cut = await _read_capped(response)
                content_type, charset = media_type(response.headers.get("content-type", ""))
                return Fetched(url, response.status_code, content_type, body, cut, charset)
            finally:
                await response.aclose()
    raise ToolError(f"more than {MAX_REDIRECTS} redirects; stopped at {url}")


def media_type(header: str) -> tuple[str, str]:
    """``text/html; charset=ISO-8859-1`` -> ("text/html", "ISO-8859-1"); utf-8 when none is given."""
    kind, *params = header.split(";")
    charset = next(
        (
            value.strip().strip('"')
            for name, _, value in (param.partition("=") for param in params)
            if name.strip().lower() == "charset" and value.strip()
        ),
        "utf-8",
    )
    return kind.strip().lower(), charset


def _pinned_request(client: Any, url: str, scheme: str, host: str, port: int, address: str) -> Any:
    """A request to the checked ``address`` with the URL's host in the Host header (and SNI)."""
    parts = urlsplit(url)
    literal = f"[{address}]" if ":" in address else address
    target = parts._replace(netloc=f"{literal}:{port}").geturl()
    host_header = host if parts.port is None else f"{host}:{parts.port}"
    headers = {"Host": host_header, "User-Agent": USER_AGENT, "Accept": "text/html, text/markdown, */*;q=0.8"}
    extensions = {"sni_hostname": host} if scheme == "https" else {}
    return client.build_request("GET", target, headers=headers, extensions=extensions)


async def _read_capped(response: Any) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BYTES:
            return bytes(body[:MAX_BYTES]), True
    return bytes(body), False


def html_to_markdown(html: str) -> str:
    from bs4 import BeautifulSoup  # markdownify's own parser; both load with the first page
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for element in soup(["script", "style", "noscript", "template", "iframe", "svg", "head"]):
        element.decompose()  # their text is not content
    markdown = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in markdown.splitlines()]
    out: list[str] = []
    for line in lines:  # runs of blank lines left by layout markup collapse to one
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip() + "\n"


def through_processors(fetched: Fetched, ctx: ToolContext) -> str:
    """JSON, CSV, PDF, archives...: saved to a file and shown by the same processors as read_file."""
    suffix = mimetypes.guess_extension(fetched.content_type) or Path(urlsplit(fetched.url).path).suffix or ".bin"
    folder = ctx.data_dir / "web-fetch"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, suffix=suffix, delete=False) as handle:
        handle.write(fetched.body)
    path = Path(handle.name)
    try:
        sample, detected = sniff(path)
        reading = Reading(
            path,
            detected.label,
            sample,
            len(fetched.body),
            4 * MAX_BYTES,
            ctx.read_limits,
            cache_dir=ctx.data_dir / "cache",
        )
        return read_view(reading, detected).render()
    except FileReadError as exc:
        raise ToolError(f"{fetched.url}: {exc}") from None
    finally:
        path.unlink(missing_ok=True)


def convert(fetched: Fetched, ctx: ToolContext) -> str:
    kind = fetched.content_type
    if kind in HTML_TYPES or (
        not kind and fetched.body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    ):
        return html_to_markdown(fetched.text())
    if kind.startswith("text/") and kind not in ("text/csv", "text/tab-separated-values"):
        return fetched.text()
    return through_processors(fetched, ctx)


class WebFetchTool(Tool):
    spec = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = str_arg(args, "url").strip()
        check_url(url)
        if not network_allowed(ctx):
            raise ToolError(
                f"network access is off in the {ctx.sandbox.mode} sandbox: {url} was not fetched. "  # type: ignore[union-attr]
                "The user can set network_access = true, or approve the domain when asked."
            )
        settings = ctx.web if isinstance(ctx.web, WebSettings) else WebSettings()
        try:
            fetched = await asyncio.wait_for(fetch(url, settings.allow_private, ctx.network), TIMEOUT_S)
        except TimeoutError:
            raise ToolError(f"timed out after {TIMEOUT_S:.0f} s fetching {url}") from None
        except ToolError:
            raise
        except Exception as exc:  # httpx2's connection and protocol errors
            raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None
        text = await asyncio.to_thread(convert, fetched, ctx)
        header = [
            f"URL: {fetched.url}",
            f"Status: {fetched.status}",
            f"Content-Type: {fetched.content_type or 'unknown'}",
        ]
        if fetched.cut:
            header.append(f"The body was cut at {MAX_BYTES // (1024 * 1024)} MB (the limit); what follows is its start")
        capture = OutputCapture(
            new_spill_path(ctx.data_dir, ctx.call_id), count_chars=output_policy(ctx).kind == "bytes"
        )
        capture.feed(text.encode("utf-8", "replace"))
        return ToolResult(format_captured(ctx, capture.finish(), header), success=fetched.status < 400)

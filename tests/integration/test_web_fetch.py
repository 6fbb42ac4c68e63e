"""web_fetch against a local HTTP server: Markdown, redirects, refusals, limits, a PDF, network off."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import SandboxPolicy
from agent_cli.tools import web_fetch
from agent_cli.tools.base import ToolContext
from agent_cli.tools.web_fetch import WebFetchTool, WebSettings
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

PAGE = b"<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p><ul><li>one</li></ul></body></html>"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        path = self.path
        if path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE)
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            self.send_response(302)
            self.send_header("Location", f"/hop/{left - 1}" if left > 0 else "/page")
            self.end_headers()
        elif path == "/to-loopback":
            self.send_response(301)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/page")
            self.end_headers()
        elif path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(11 * 16 + 2):  # a little over 11 MB
                    self.wfile.write(chunk)
            except OSError:
                pass
        elif path == "/slow":
            time.sleep(3)
            self._send(200, "text/plain", b"late")
        elif path == "/latin1":
            self._send(200, "text/html; charset=ISO-8859-1", "<p>Caf\u00e9 cr\u00e8me</p>".encode("latin-1"))
        elif path == "/unknown-charset":
            self._send(200, "text/plain; charset=no-such-codec", "na\u00efve".encode())
        elif path == "/doc.pdf":
            self._send(200, "application/pdf", self.server.pdf)
        else:
            self._send(404, "text/plain", b"nope")

    def _send(self, status, kind, body):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:  # the client gave up (the timeout test)
            pass


def make_pdf(text: str) -> bytes:
    """A minimal one-page PDF with ``text`` (offsets computed, so parsers accept it)."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture
def site():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.pdf = make_pdf("Hello from a PDF")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def context(tmp_path: Path, *, allow_private=True, sandbox=None) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", sandbox=sandbox, web=WebSettings(allow_private))


async def fetch(ctx, url):
    import json

    from agent_cli.items import ToolCall as Call
    from agent_cli.tools.registry import ToolRegistry

    return await ToolRegistry([WebFetchTool()]).dispatch(Call("c1", "web_fetch", json.dumps({"url": url})), ctx)


async def test_html_becomes_markdown_without_scripts(site, tmp_path):
    result = await fetch(context(tmp_path), f"{site}/page")
    assert result.success, result.output
    assert "# Title" in result.output and "**bold**" in result.output and "* one" in result.output
    assert "alert(1)" not in result.output and "p{}" not in result.output


async def test_the_declared_charset_is_honoured(site, tmp_path):
    result = await fetch(context(tmp_path), f"{site}/latin1")
    assert "Caf\u00e9 cr\u00e8me" in result.output
    result = await fetch(context(tmp_path), f"{site}/unknown-charset")  # unknown to Python: UTF-8
    assert "na\u00efve" in result.output


async def test_a_redirect_chain_is_followed_up_to_five_hops(site, tmp_path):
    result = await fetch(context(tmp_path), f"{site}/hop/4")
    assert result.success and "# Title" in result.output and "URL: " + site + "/page" in result.output
    result = await fetch(context(tmp_path), f"{site}/hop/5")
    assert not result.success and "more than 5 redirects" in result.output


async def test_private_addresses_are_refused_unless_allowed_also_after_a_redirect(site, tmp_path, monkeypatch):
    result = await fetch(context(tmp_path, allow_private=False), f"{site}/page")
    assert not result.success and "refused" in result.output and "127.0.0.1" in result.output
    # A public-looking first hop that redirects to loopback: the redirect is checked like the first URL.
    real_resolve = web_fetch.resolve_public

    async def first_hop_public(host, port, allow_private):
        return await real_resolve(host, port, True if host == "localhost" else allow_private)

    monkeypatch.setattr(web_fetch, "resolve_public", first_hop_public)
    result = await fetch(
        context(tmp_path, allow_private=False), f"{site.replace('127.0.0.1', 'localhost')}/to-loopback"
    )
    assert not result.success and "refused" in result.output and "127.0.0.1" in result.output


async def test_an_oversized_body_is_cut_at_the_limit(site, tmp_path):
    result = await fetch(context(tmp_path), f"{site}/big")
    assert "cut at 10 MB" in result.output
    assert "Full output (10485760 bytes) saved to" in result.output


@pytest.mark.serial  # timed: a bound of 2.5 s
async def test_a_slow_server_times_out(site, tmp_path, monkeypatch):
    monkeypatch.setattr(web_fetch, "TIMEOUT_S", 0.5)
    started = time.monotonic()
    result = await fetch(context(tmp_path), f"{site}/slow")
    assert not result.success and "timed out" in result.output
    assert time.monotonic() - started < 2.5


async def test_a_pdf_goes_through_the_file_processors(site, tmp_path):
    result = await fetch(context(tmp_path), f"{site}/doc.pdf")
    assert result.success, result.output
    assert "Hello from a PDF" in result.output


async def test_other_schemes_are_refused(tmp_path):
    result = await fetch(context(tmp_path), "file:///etc/passwd")
    assert not result.success and "only http and https" in result.output


async def test_network_off_refuses_clearly(site, tmp_path):
    sandbox = SandboxPolicy.create("workspace-write", tmp_path)
    result = await fetch(context(tmp_path, sandbox=sandbox), f"{site}/page")
    assert not result.success and "network access is off" in result.output


async def test_exec_without_network_denies_and_an_approved_domain_is_fetched(server, site, tmp_path, monkeypatch):
    call = ToolCall("web_fetch", {"url": f"{site}/page"})
    server.script(Reply(tool_calls=[call]), Reply(text="no"), Reply(tool_calls=[call]), Reply(text="yes"))
    session = make_session(server, tmp_path, monkeypatch, "web_fetch_allow_private=true")
    try:
        await collect_events(session, "fetch it")
        denied = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]
        assert "network access is off" in denied and "cannot ask" in denied
    finally:
        await session.aclose()
    session = make_session(server, tmp_path, monkeypatch, "web_fetch_allow_private=true", interactive=True)
    try:
        await collect_events(session, "fetch it", answer="approve")
        fetched = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]
        assert "# Title" in fetched
    finally:
        await session.aclose()


async def test_webfetch_domain_rules_allow_and_deny_without_asking(server, site, tmp_path, monkeypatch):
    call = ToolCall("web_fetch", {"url": f"{site}/page"})
    server.script(Reply(tool_calls=[call]), Reply(text="fetched"), Reply(tool_calls=[call]), Reply(text="denied"))
    allowed = make_session(
        server,
        tmp_path,
        monkeypatch,
        "web_fetch_allow_private=true",
        'permissions.allow=["WebFetch(domain:127.0.0.1)"]',
    )  # exec: no network, nobody to ask
    try:
        await collect_events(allowed, "fetch it")
        fetched = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]
        assert "# Title" in fetched
    finally:
        await allowed.aclose()
    denied = make_session(
        server,
        tmp_path,
        monkeypatch,
        "web_fetch_allow_private=true",
        'sandbox_mode="danger-full-access"',
        'permissions.deny=["WebFetch(domain:*.0.0.1)"]',
    )
    try:
        await collect_events(denied, "fetch it")
        refused = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][-1]
        assert "WebFetch(domain:*.0.0.1)" in refused and "# Title" not in refused
    finally:
        await denied.aclose()

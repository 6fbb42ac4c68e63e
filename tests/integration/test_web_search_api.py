"""The `web_search` tool backed by a configured search API, for Chat Completions servers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

BRAVE_ANSWER = {
    "type": "search",
    "query": {"original": "textual"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Textual",
                "url": "https://textual.textualize.io/",
                "description": "A TUI framework <strong>for</strong> Python.",
            },
            {"title": "Rich", "url": "https://rich.readthedocs.io/", "description": "Rich text in the terminal."},
        ],
    },
}


@pytest.fixture
def brave():
    seen: list[tuple[str, dict]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append((self.path, dict(self.headers)))
            body = json.dumps(BRAVE_ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}", seen
    httpd.shutdown()
    httpd.server_close()


def api_table(base: str) -> str:
    return 'web_search_api={preset="brave", url="' + base + '/res/v1/web/search?q={query}&count={count}"}'


async def test_a_chat_server_gets_web_search_through_the_configured_api(server, brave, tmp_path, monkeypatch):
    base, seen = brave
    monkeypatch.setenv("BRAVE_API_KEY", "brave-test-key")
    server.script(Reply(tool_calls=[ToolCall("web_search", {"query": "textual tui", "count": 1})]), Reply(text="found"))
    session = make_session(server, tmp_path, monkeypatch, 'web_search="live"', api_table(base))
    try:
        await collect_events(session, "search")
        names = [tool["function"]["name"] for tool in server.requests[0].body["tools"]]
        assert "web_search" in names
        output = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][0]
        assert "1. Textual\n   https://textual.textualize.io/" in output and "Rich" not in output  # count=1
        path, headers = seen[0]
        assert parse_qs(urlsplit(path).query) == {"q": ["textual tui"], "count": ["1"]}
        assert headers.get("X-Subscription-Token") == "brave-test-key"
    finally:
        await session.aclose()


@pytest.mark.parametrize(
    ("overrides", "provider"),
    [
        (['web_search="live"'], "openai-chat"),  # no API configured
        (["API"], "openai-chat"),  # exec: search is off unless configured
        (['web_search="live"', "API"], "openai"),  # Responses has its own search
    ],
)
async def test_the_tool_is_offered_only_where_it_is_needed(server, brave, tmp_path, monkeypatch, overrides, provider):
    base, _ = brave
    overrides = [api_table(base) if o == "API" else o for o in overrides]
    session = make_session(server, tmp_path, monkeypatch, *overrides, provider=provider)
    try:
        assert "web_search" not in session.tools.names
    finally:
        await session.aclose()


async def test_a_bad_table_is_a_warning(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch, 'web_search="live"', 'web_search_api={preset="bing"}')
    try:
        assert any("web_search_api" in w and "preset" in w for w in session.take_load_warnings())
    finally:
        await session.aclose()

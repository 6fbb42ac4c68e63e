"""Which web pages may open the app-server's WebSocket: none today (Codex refuses every request
with an ``Origin``); once the server serves its own page (issue #48), that page only, from the
exact origin it was served from, never a rebound DNS name or another port."""

from __future__ import annotations

from agent_cli.app_server.transports import same_origin

SERVED = frozenset({"127.0.0.1:4500", "localhost:4500"})


def test_no_page_is_served_so_no_origin_passes():
    assert not same_origin("http://127.0.0.1:4500", "127.0.0.1:4500", frozenset())


def test_only_the_served_page_from_its_own_origin_passes():
    assert same_origin("http://127.0.0.1:4500", "127.0.0.1:4500", SERVED)
    assert same_origin("http://localhost:4500", "localhost:4500", SERVED)
    assert not same_origin("http://evil.example", "127.0.0.1:4500", SERVED)  # another site
    assert not same_origin("http://evil.example:4500", "evil.example:4500", SERVED)  # DNS rebinding
    assert not same_origin("http://127.0.0.1:8080", "127.0.0.1:4500", SERVED)  # another port
    assert not same_origin("https://127.0.0.1:4500", "127.0.0.1:4500", SERVED)
    assert not same_origin("null", "127.0.0.1:4500", SERVED)
    assert not same_origin("http://127.0.0.1:4500", None, SERVED)

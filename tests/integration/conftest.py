"""Fixtures of the integration tests that several files share."""

from __future__ import annotations

import pytest

from tests.app_server_helpers import AppServers


@pytest.fixture
def app_servers(server, tmp_path):
    """``start(repo, *args)``: a real `agent app-server` against the fake model server, ended (and its
    messages checked against Codex's schema) when the test ends."""
    with AppServers(server, tmp_path) as servers:
        yield servers.start

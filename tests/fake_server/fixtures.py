"""Optional pytest fixture. Enable it with, in a conftest.py:

    pytest_plugins = ["tests.fake_server.fixtures"]

then take `fake_server` as a test argument: a started `FakeModelServer`
stopped after the test. Call `fake_server.assert_done()` yourself.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from .server import FakeModelServer


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server

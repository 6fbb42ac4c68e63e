"""A real browser for the tests of the app-server's web page: Debian's Chromium (installed by
.ci/run with apt), headless, driven by Playwright for Python (the `test` extra) through
``executable_path``; Playwright's own browser download is never used. Without either, the tests
that need it skip and say why."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")
# What Chromium needs to start as root in a container, and to reach nothing but the test's servers.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
REBOUND_NAME = "rebound.example"  # resolves to 127.0.0.1 in this browser only: a DNS rebinding stand-in


def chromium_path() -> str | None:
    if (given := os.environ.get("AGENT_TEST_CHROMIUM")) is not None:
        return given if os.access(given, os.X_OK) else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "Chromium is not installed (apt-get install chromium; .ci/run does)"
    return None


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium with a fresh profile (Playwright makes one per launch), closed after."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(),
            headless=True,
            args=[*FLAGS, f"--host-resolver-rules=MAP {REBOUND_NAME} 127.0.0.1"],
        )
        try:
            yield browser
        finally:
            await browser.close()

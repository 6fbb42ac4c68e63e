"""Import the HTTP library on a thread from the first moment.

Nothing before the first request needs it; started as soon as `agent exec` knows it will talk to
a model, its import uses the moments the main thread waits (reading files, starting the login
shell's snapshot), and the first request finds it done or waits on the same import lock.
"""

from __future__ import annotations

import contextlib
import importlib
import threading


def prefetch_http() -> threading.Thread:
    """Start importing httpx2 in the background; an import error surfaces at the first request."""

    def run() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module("httpx2")

    thread = threading.Thread(target=run, name="http-prefetch", daemon=True)
    thread.start()
    return thread

"""Import the provider SDK on a thread from the first moment.

The SDK is most of `agent exec`'s start-up (the ``openai`` package's types alone take a third of
a second), and nothing before the first request needs it. Started as soon as the provider is
known, its import overlaps with loading the tokenizer, building the initial context and setting
up the sandbox; the client's own lazy import then finds it done (or waits on the same import
lock instead of starting over).
"""

from __future__ import annotations

import contextlib
import importlib
import threading

# The modules the first request touches, per wire API: the package, then the resource it calls.
SDK_MODULES = {
    "responses": ("openai", "openai.resources.responses"),
    "chat": ("openai", "openai.resources.chat"),
    "anthropic": ("anthropic", "anthropic.resources.messages"),
}


def prefetch_sdk(wire_api: str) -> threading.Thread | None:
    """Start importing the SDK for ``wire_api`` in the background; errors surface later, at the
    first request, where the client reports them."""
    modules = SDK_MODULES.get(wire_api)
    if not modules:
        return None

    def run() -> None:
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=run, name="sdk-prefetch", daemon=True)
    thread.start()
    return thread

"""The context window the session plans with: its size, where it came from, and how it is corrected.

It starts from the config, the model table or the default. On an OpenAI-compatible server it
is then corrected by what the server says (discovery, models/discovery.py), by the window a
"prompt too long" error names, and by a usage report showing the server silently dropped part
of the prompt. Usage reports also calibrate the token estimates (context/tokens.py).
What is learned belongs to the session (and to its model): the config stays as loaded, so a
subagent on another model that learns its own window leaves its parent's as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from agent_cli import events as ev
from agent_cli.config import Config, window_for
from agent_cli.models.base import ModelClient, Usage
from agent_cli.models.discovery import DiscoveredWindow, discover_window, should_probe
from agent_cli.models.errors import ContextWindowExceeded
from agent_cli.models.model_info import known_context_window
from agent_cli.session.learned import LearnedState
from agent_cli.session.state import Emit

# A report below this share of what we estimate we sent means the server cut the prompt.
TRUNCATION_SHARE = 0.5
# Reports smaller than this are not taken as truncation: no real server runs a window this
# small, and some report only the uncached part of a prompt.
MIN_TRUNCATION_REPORT = 1_024
TRUNCATION_WARNING = (
    "The server processed about {reported:,} of the ~{sent:,} tokens sent; its window is probably "
    "smaller than the agent assumed ({window:,}). Using {reported:,} from now on: set "
    "`model_context_window` or raise the server's context size (llama.cpp -c, Ollama num_ctx)."
)


def initial_source(config: Config, model: str) -> str:
    if "model_context_window" in config.raw:
        return "config"
    return "model table" if known_context_window(model) else "default"


class ContextWindow:
    """The window of one session's model: its size in ``tokens`` and where that came from.

    What was learned is kept per model, so a switch back (``/model``, a command file's ``model:``)
    finds it again."""

    def __init__(self, config: Config, model: str, learned: LearnedState):
        self._config = config
        self._learned = learned  # writes what is learned to the session file, for a resume
        self._known: dict[str, tuple[int, str]] = {}  # model -> (tokens, source) learned from its server
        self._discovery: asyncio.Task[DiscoveredWindow | None] | None = None
        self.switch(model)

    def switch(self, model: str) -> None:
        """Plan for ``model`` from now on: what was learned about it, else the config or model table."""
        self.cancel()
        self.model = model
        looked_up = window_for(self._config, model), initial_source(self._config, model)
        self.tokens, self.source = self._known.get(model, looked_up)
        self._discovery = None
        self._discovery_done = False
        self._truncation_warned = False
        self._usage_warned = False  # a usage report that cannot be true was ignored (warned once)
        self.sent_tokens = 0  # our own count of the request in flight
        self.sent_items = 0  # the history's length when it was sent
        self.sent_exactly = False  # counted with the tokenizer, not the estimate

    def adopt(self, other: ContextWindow) -> None:
        """Start from what ``other`` (a parent session's window) learned; what this one learns
        later stays its own."""
        self._known = {**other._known, **self._known}
        if self.model in self._known:
            self.tokens, self.source = self._known[self.model]

    def restore(self, tokens: int, source: str) -> None:
        """The window a resumed session file recorded for the current model (a configured one wins)."""
        if not self.configured:
            self._known[self.model] = self.tokens, self.source = tokens, source

    def cancel(self) -> None:
        if self._discovery is not None:
            self._discovery.cancel()

    @property
    def configured(self) -> bool:
        return self.source == "config"

    def start_discovery(self, client: Callable[[], ModelClient]) -> None:
        """On the first request, start asking the server its window (concurrently); ``client``
        makes the model's client, which a request needs anyway."""
        if self._discovery is None and not self._discovery_done and not self.configured:
            self._discovery_done = True
            self._discovery = start_discovery(self._config, client, self.model)

    async def settle_discovery(self, emit: Emit) -> None:
        """Apply the server's answer, once it is in (each probe has a short timeout)."""
        task, self._discovery = self._discovery, None
        if task is None:
            return
        found = None
        with contextlib.suppress(Exception):
            found = await task
        if found is not None and found.tokens != self.tokens:
            before = self.tokens
            self.set(found.tokens, found.source)
            emit(
                ev.Notice(
                    f"{found.server} serves {self.model} with a {found.tokens:,}-token context window "
                    f"(the agent assumed {before:,}); using {found.tokens:,}.",
                    title="context window",
                )
            )
        elif found is not None:
            self.source = found.source

    def checked_usage(self, usage: Usage | None, emit: Emit) -> Usage | None:
        """The server's usage report, or None when its figures cannot be true (warned once per
        session): the context is then estimated, so a bad report never hides how full it is."""
        if usage is None or (problem := usage.problem()) is None:
            return usage
        if not self._usage_warned:
            self._usage_warned = True
            emit(
                ev.Warning(f"ignored the server's token usage report: {problem}; the context size is estimated instead")
            )
        return None

    def prompt_was_cut(self, reported: int, expected: int, emit: Emit) -> None:
        """A usage report says the server kept ``reported`` of the ``expected`` tokens sent: when
        that makes the window smaller, plan with it from now on (warned once)."""
        if self.would_shrink(reported):
            if not self._truncation_warned:
                self._truncation_warned = True
                emit(ev.Warning(TRUNCATION_WARNING.format(reported=reported, sent=expected, window=self.tokens)))
            self.set(reported, "server usage report (the prompt was cut)")

    def would_shrink(self, reported: int) -> bool:
        """Whether a cut prompt with ``reported`` tokens kept makes the window that small."""
        return reported >= MIN_TRUNCATION_REPORT and not self.configured and reported < self.tokens

    async def learn_from_overflow(self, error: ContextWindowExceeded, emit: Emit) -> None:
        """The server refused the prompt; if it named its window, plan with that from now on."""
        await self.settle_discovery(emit)
        window = error.window
        if window is None or window >= self.tokens:
            return
        emit(
            ev.Notice(
                f"The server's context window is {window:,} tokens (the agent assumed "
                f"{self.tokens:,}); compacting to fit.",
                title="context window",
            )
        )
        self.set(window, "server error (prompt too long)")

    def set(self, tokens: int, source: str) -> None:
        self._known[self.model] = self.tokens, self.source = tokens, source
        self._learned.window_learned(self.model, tokens, source)  # a resume starts from it


def start_discovery(
    config: Config, client: Callable[[], ModelClient], model: str
) -> asyncio.Task[DiscoveredWindow | None] | None:
    """Ask the server in the background; None when the provider is not OpenAI-compatible."""
    if config.provider.wire_api != "chat":
        return None
    made = client()  # made here, not before: another provider's may need what this one does not
    base_url = made.base_url
    if base_url is None or not should_probe(base_url):
        return None
    return asyncio.create_task(
        discover_window(base_url, model, api_key=made.api_key, cache_dir=config.agent_home / "cache")
    )

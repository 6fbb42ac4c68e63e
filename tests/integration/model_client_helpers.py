"""Shared helpers for the model-client tests: a client per wire pointed at the fake server."""

from __future__ import annotations

from agent_cli.items import Item
from agent_cli.models.base import Completed, OutputItem, Prompt, Retrying, StreamEvent, TextDelta, ToolSpec
from agent_cli.models.registry import BUILTIN_PROVIDERS, create_client
from agent_cli.models.retry import RetryPolicy

WIRES = ("responses", "chat", "anthropic")
# wire -> (built-in provider, default model used against the fake server)
PROVIDER_FOR = {
    "responses": ("openai", "gpt-5"),
    "chat": ("openai-chat", "qwen3:8b"),
    "anthropic": ("anthropic", "claude-sonnet-4-6"),
}
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)
SHELL = ToolSpec("shell", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}})


def make_client(server, wire: str, *, model: str | None = None, retry: RetryPolicy = FAST_RETRY, **kwargs):
    provider_id, default_model = PROVIDER_FOR[wire]
    base_url = server.base_url if wire == "anthropic" else server.openai_base_url
    return create_client(
        BUILTIN_PROVIDERS[provider_id],
        model or default_model,
        api_key="test-key",
        base_url=base_url,
        retry=retry,
        **kwargs,
    )


async def collect(client, prompt: Prompt, into: list[StreamEvent] | None = None) -> list[StreamEvent]:
    """All events of one stream (also appended to ``into``, to inspect them after a raise)."""
    events = [] if into is None else into
    try:
        async for event in client.stream(prompt):
            events.append(event)
    finally:
        await client.aclose()  # the test's event loop ends with the test
    return events


def output_items(events: list[StreamEvent]) -> list[Item]:
    return [e.item for e in events if isinstance(e, OutputItem)]


def text_deltas(events: list[StreamEvent]) -> str:
    """The text of the deltas streamed after the last Retrying event (the surviving attempt)."""
    last_retry = max((i for i, e in enumerate(events) if isinstance(e, Retrying)), default=-1)
    return "".join(e.text for e in events[last_retry + 1 :] if isinstance(e, TextDelta))


def retries(events: list[StreamEvent]) -> list[Retrying]:
    return [e for e in events if isinstance(e, Retrying)]


def completed(events: list[StreamEvent]) -> Completed:
    done = [e for e in events if isinstance(e, Completed)]
    assert len(done) == 1, f"expected exactly one Completed, got {len(done)}"
    assert events[-1] is done[0], "Completed must be the last event"
    return done[0]

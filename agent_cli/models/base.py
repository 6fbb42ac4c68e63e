"""What every model client provides: one streaming call from a provider-neutral prompt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_cli.items import Item
from agent_cli.models.web_search import WebCitations, WebSearchDone

MAX_PLAUSIBLE_TOKENS = 100_000_000  # a usage figure above this is a server's error


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one request, in one shape for every provider.

    ``input_tokens`` counts the whole prompt, cached part included.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def problem(self) -> str | None:
        """Why these figures cannot be true (negative, not whole numbers, absurdly large), or None.
        A server's bad report must not steer the context accounting (or stop a compaction)."""
        for name in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                return f"{name} is {value!r}, not a whole number"
            if value < 0:
                return f"{name} is negative ({value:,})"
            if value > MAX_PLAUSIBLE_TOKENS:
                return f"{name} is {value:,}, more than any model's window"
        if self.cached_input_tokens > self.input_tokens:
            return (
                f"cached_input_tokens ({self.cached_input_tokens:,}) is more than input_tokens ({self.input_tokens:,})"
            )
        return None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: a name, a description and a JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Prompt:
    """Everything one request sends: instructions, the conversation, and the tools."""

    instructions: str
    items: list[Item]
    tools: list[ToolSpec] = field(default_factory=list)
    # `agent exec --output-schema`: the JSON Schema the answer must follow (Responses and Chat
    # send it as their structured-output format), and a tool the model must call (Anthropic's
    # way to structured output: a forced tool whose input is the answer).
    output_schema: dict[str, Any] | None = None
    forced_tool: str | None = None
    web_search: str = "off"  # the provider's own search: off, cached, live (models/web_search.py)


OUTPUT_SCHEMA_NAME = "final_answer"  # the name the schema is sent under (Codex's providers need one)


# --- Stream events a client yields, in order, for one request -----------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class OutputItem:
    """One finished output item (message, reasoning or tool call)."""

    item: Item


@dataclass(frozen=True, slots=True)
class Retrying:
    """The request failed transiently and will be sent again after ``delay`` seconds.

    Deltas streamed before this event belong to the abandoned attempt.
    """

    attempt: int
    max_attempts: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class ClientNotice:
    """Something the user should know about the server, said once (e.g. it has no tool support)."""

    message: str


# Why a response ended, in one vocabulary for every wire (``Completed.stop_reason``).
STOP_END = "end"  # the model finished (an answer, or tool calls to run)
STOP_MAX_TOKENS = "max_tokens"  # cut off by the output limit: Chat `length`, Responses `incomplete`
STOP_PAUSED = "pause_turn"  # the server paused a long turn; sending the conversation again resumes it
STOP_REFUSAL = "refusal"  # the model declined; its text (if any) is the refusal
STOP_CONTENT_FILTER = "content_filter"  # the provider's filter stopped the answer
CUT_OFF = frozenset({STOP_MAX_TOKENS, STOP_CONTENT_FILTER})


@dataclass(frozen=True, slots=True)
class Completed:
    usage: Usage | None
    response_id: str | None = None
    stop_reason: str = STOP_END
    request_id: str | None = None  # the provider's id of the request (support asks for it)


StreamEvent = (
    TextDelta | ReasoningDelta | OutputItem | Retrying | ClientNotice | WebSearchDone | WebCitations | Completed
)


class ModelClient(Protocol):
    """A provider's streaming client.

    ``stream`` yields deltas, then each finished output item, then exactly one ``Completed``.
    It raises :class:`agent_cli.models.errors.ContextWindowExceeded` when the prompt is too long
    and :class:`agent_cli.models.errors.ModelError` for anything the user must fix or that
    survived all retries.
    """

    # Read only here (a client may keep them as plain attributes): a client's own `api_key: str`
    # then meets the protocol's `str | None`.
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def base_url(self) -> str | None:
        """As configured; None: the provider's default."""
        ...

    @property
    def url(self) -> str:
        """The base URL requests go to (the configured one, else the provider's default)."""
        ...

    def stream(self, prompt: Prompt) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None:
        """Close the connection pool; the next ``stream`` opens a new one."""
        ...

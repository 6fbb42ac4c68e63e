"""What an OpenAI-compatible server turned out not to support, learned from its errors.

A server that rejects ``stream_options`` or ``tools`` is asked again without them, once, and
the session remembers for its rest (:func:`quirks_for`: ``/model`` creates a new client, which
finds what was learned about its server and model). Matching is on the error text, as these
servers have no error codes for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_NO_TOOLS_PHRASES = (
    "does not support tools",  # Ollama
    "does not support tool",
    "tool choice requires --enable-auto-tool-choice",  # vLLM
    "--tool-call-parser",  # vLLM
    "tools param requires --jinja",  # llama.cpp
    "tools are not supported",
    "tool use is not supported",
    "support tool use",  # OpenRouter: "No endpoints found that support tool use"
    "does not support function calling",
    "function calling is not supported",
)
TOOL_MODELS_HINT = "qwen2.5-coder, qwen3, llama3.1, mistral-nemo or gpt-oss"


@dataclass
class ChatQuirks:
    include_usage: bool = True  # send stream_options.include_usage
    tools: bool = True  # send tool definitions

    def adapt(self, exc: BaseException, params: dict[str, Any]) -> str | None:
        """If ``exc`` rejects something this request can do without, stop sending it.

        Returns "stream_options" or "tools" when the request should be sent again, else None.
        """
        status = getattr(exc, "status_code", None)
        if status not in (400, 422, 500, 501):
            return None
        text = _error_text(exc).lower()
        if "stream_options" in params and "stream_options" in text and self.include_usage:
            self.include_usage = False
            return "stream_options"
        if "tools" in params and self.tools and any(phrase in text for phrase in _NO_TOOLS_PHRASES):
            self.tools = False
            return "tools"
        return None


def quirks_for(known: dict[tuple[str, str], ChatQuirks], base_url: str, model: str) -> ChatQuirks:
    """The quirks of ``model`` at ``base_url``, shared by every client the session creates for it.

    Tool support is per model (one model on a server may call tools, another not);
    ``stream_options`` is the server's, so a model new to a server that rejected it starts without.
    """
    quirks = known.get((base_url, model))
    if quirks is None:
        same_server = [q for (url, _), q in known.items() if url == base_url]
        include_usage = all(q.include_usage for q in same_server)
        quirks = known[(base_url, model)] = ChatQuirks(include_usage=include_usage)
    return quirks


def _error_text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {body}" if body is not None else str(exc)


def no_tools_notice(model: str, server: str) -> str:
    return (
        f"{model} at {server} does not support tool calls, so the agent cannot read files, run "
        f"commands or edit for you; it will only answer in text. Use a model that supports tools "
        f"(for example {TOOL_MODELS_HINT}) or enable the server's tool parser."
    )

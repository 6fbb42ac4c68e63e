"""Provider-side web search: the tool each API takes and how its stream reports searches and citations.

Kept apart from the clients: their request builders call :func:`responses_tool` /
:func:`anthropic_tool`, and their stream loops hand the search-related events to the small
functions and the :class:`AnthropicSearches` tracker here, which turn them into two
provider-neutral stream events: :class:`WebSearchDone` (a query and its results) and
:class:`WebCitations` (the sources the answer cites).

``web_search`` settings (Codex's): ``off``; ``cached`` (OpenAI: ``external_web_access: false``,
results from its index; Anthropic has no such mode and searches live); ``live``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MODES = ("off", "cached", "live")
ANTHROPIC_MAX_USES = 5  # searches per request


@dataclass(frozen=True, slots=True)
class WebSource:
    url: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class WebSearchDone:
    """The provider ran a search: its query and what it found (OpenAI may give only URLs)."""

    call_id: str
    query: str
    sources: tuple[WebSource, ...] = ()
    status: str = "completed"


@dataclass(frozen=True, slots=True)
class WebCitations:
    """The sources the answer of this response cites, each once, in order of first citation."""

    sources: tuple[WebSource, ...]


def responses_tool(mode: str) -> dict[str, Any] | None:
    if mode not in ("cached", "live"):
        return None
    return {"type": "web_search", "external_web_access": mode == "live"}


def anthropic_tool(mode: str) -> dict[str, Any] | None:
    if mode not in ("cached", "live"):
        return None
    return {"type": "web_search_20250305", "name": "web_search", "max_uses": ANTHROPIC_MAX_USES}


# --- OpenAI Responses --------------------------------------------------------------------


def responses_search(item: dict[str, Any]) -> WebSearchDone | None:
    """A finished ``web_search_call`` output item."""
    if item.get("type") != "web_search_call":
        return None
    action = item.get("action") or {}
    query = action.get("query") or "; ".join(action.get("queries") or []) or action.get("url") or ""
    sources = tuple(
        WebSource(s["url"], s.get("title") or "")
        for s in action.get("sources") or []
        if isinstance(s, dict) and s.get("url")
    )
    return WebSearchDone(item.get("id") or "", query, sources, item.get("status") or "completed")


def responses_citations(item: dict[str, Any]) -> WebCitations | None:
    """The ``url_citation`` annotations of a finished message item."""
    if item.get("type") != "message":
        return None
    annotations = [a for part in item.get("content") or [] for a in part.get("annotations") or []]
    return _citations(a for a in annotations if a.get("type") == "url_citation")


# --- Anthropic Messages ------------------------------------------------------------------


@dataclass
class AnthropicSearches:
    """Follows ``server_tool_use`` and ``web_search_tool_result`` blocks and ``citations_delta``s."""

    queries: dict[int, list[str]] = field(default_factory=dict)  # block index -> input JSON parts
    calls: dict[str, str] = field(default_factory=dict)  # server tool use id -> its query
    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    cited: list[dict[str, Any]] = field(default_factory=list)
    ids: dict[int, str] = field(default_factory=dict)

    def start(self, index: int, block: dict[str, Any]) -> bool:
        """True when the block is one of ours (the client then ignores it)."""
        kind = block.get("type")
        if kind == "server_tool_use" and block.get("name") == "web_search":
            self.queries[index] = []
            self.ids[index] = block.get("id") or ""
            self.calls[self.ids[index]] = str((block.get("input") or {}).get("query") or "")
            return True
        if kind == "web_search_tool_result":
            self.results[index] = block
            return True
        return False

    def delta(self, index: int, delta: dict[str, Any]) -> bool:
        """True when the delta was ours: a search's query, or a citation on a text block."""
        if delta.get("type") == "citations_delta":
            citation = delta.get("citation") or {}
            if citation.get("type") == "web_search_result_location":
                self.cited.append(citation)
            return True
        if index in self.queries and delta.get("type") == "input_json_delta":
            self.queries[index].append(delta.get("partial_json") or "")
            return True
        return False

    def stop(self, index: int) -> WebSearchDone | None:
        if index in self.queries:
            streamed = "".join(self.queries.pop(index))
            use_id = self.ids.pop(index, "")
            try:
                parsed = json.loads(streamed) if streamed else {}
            except ValueError:
                parsed = {}
            if isinstance(parsed, dict) and parsed.get("query"):
                self.calls[use_id] = str(parsed["query"])
            return None
        block = self.results.pop(index, None)
        if block is None:
            return None
        use_id = block.get("tool_use_id") or ""
        content = block.get("content")
        if not isinstance(content, list):  # an error object: {"type": "web_search_tool_result_error", ...}
            return WebSearchDone(use_id, self.calls.get(use_id, ""), (), "failed")
        sources = tuple(
            WebSource(r["url"], r.get("title") or "") for r in content if isinstance(r, dict) and r.get("url")
        )
        return WebSearchDone(use_id, self.calls.get(use_id, ""), sources)

    def citations(self) -> WebCitations | None:
        return _citations(self.cited)


def _citations(annotations) -> WebCitations | None:
    seen: dict[str, WebSource] = {}
    for annotation in annotations:
        url = annotation.get("url")
        if url and url not in seen:
            seen[url] = WebSource(url, annotation.get("title") or "")
    return WebCitations(tuple(seen.values())) if seen else None

"""The ``web_search`` tool for servers without a search of their own (Chat Completions), backed by
a search API the user configures in ``[web_search_api]``:

```toml
[web_search_api]
preset = "brave"                 # or "searxng"; fills in the fields below, which override it
url = "https://api.search.brave.com/res/v1/web/search?q={query}&count={count}"
env_key = "BRAVE_API_KEY"        # the key's variable; omit for an API without a key
key_header = "X-Subscription-Token"   # default: Authorization: Bearer <key>
results = "web.results"          # dotted path to the list of results in the JSON answer
title = "title"                  # fields of one result
link = "url"
snippet = "description"
```

Brave Search answers ``{"web": {"results": [{"title", "url", "description", ...}]}}``; SearXNG
(``/search?q=...&format=json``) answers ``{"results": [{"title", "url", "content", ...}]}``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import quote_plus

from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, str_arg

TIMEOUT_S = 20.0
DEFAULT_COUNT = 8
MAX_COUNT = 20
SNIPPET_CHARS = 300

SPEC = ToolSpec(
    name="web_search",
    description="Search the web; returns titles, URLs and snippets (read a page with web_fetch).",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}, "count": {"type": "integer", "description": "At most 20."}},
        "required": ["query"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True, slots=True)
class SearchApi:
    url: str  # with {query} and optionally {count}
    env_key: str | None = None
    key_header: str | None = None  # None: Authorization: Bearer
    results: str = "results"
    title: str = "title"
    link: str = "url"
    snippet: str = "content"

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> SearchApi:
        """Raises ValueError naming the key that is wrong."""
        preset = table.get("preset")
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"`web_search_api.preset` must be one of {', '.join(PRESETS)}, got {preset!r}")
        base = PRESETS.get(preset) if preset else None
        known = {f.name for f in fields(cls)} | {"preset"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"`web_search_api` has unknown key(s): {', '.join(unknown)}")
        values = {k: v for k, v in table.items() if k != "preset"}
        for key, value in values.items():
            if not isinstance(value, str) or not value:
                raise ValueError(f"`web_search_api.{key}` must be a non-empty string")
        api = replace(base, **values) if base else None
        if api is None:
            if "url" not in values:
                raise ValueError("`web_search_api` needs a `url` (with {query}) or a `preset`")
            api = cls(**values)
        if "{query}" not in api.url:
            raise ValueError("`web_search_api.url` must contain {query}")
        return api


PRESETS = {
    "brave": SearchApi(
        "https://api.search.brave.com/res/v1/web/search?q={query}&count={count}",
        env_key="BRAVE_API_KEY",
        key_header="X-Subscription-Token",
        results="web.results",
        snippet="description",
    ),
    "searxng": SearchApi("http://localhost:8888/search?q={query}&format=json", results="results", snippet="content"),
}


def _dig(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def format_results(data: Any, api: SearchApi, count: int) -> str:
    results = _dig(data, api.results)
    if not isinstance(results, list):
        raise ToolError(f"the search API's answer has no list at {api.results!r}")
    lines = []
    for number, result in enumerate((r for r in results if isinstance(r, dict)), 1):
        if number > count:
            break
        snippet = " ".join(str(result.get(api.snippet) or "").split())[:SNIPPET_CHARS]
        lines.append(f"{number}. {result.get(api.title) or '(no title)'}\n   {result.get(api.link) or ''}")
        if snippet:
            lines.append(f"   {snippet}")
    return "\n".join(lines) if lines else "No results."


class WebSearchApiTool(Tool):
    spec = SPEC

    def __init__(self, api: SearchApi):
        self.api = api

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import httpx2  # with the first search

        query = str_arg(args, "query")
        count = min(int_arg(args, "count", DEFAULT_COUNT), MAX_COUNT)
        api = self.api
        headers = {"Accept": "application/json"}
        if api.env_key:
            key = os.environ.get(api.env_key)
            if not key:
                raise ToolError(f"the search API's key is missing: set {api.env_key}")
            headers.update({api.key_header: key} if api.key_header else {"Authorization": f"Bearer {key}"})
        url = api.url.replace("{query}", quote_plus(query)).replace("{count}", str(count))
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT_S) as client:
                response = await client.get(url, headers=headers)
        except Exception as exc:  # connection errors and timeouts: the model reads them
            raise ToolError(f"the search API failed: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            raise ToolError(f"the search API answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            data = response.json()
        except ValueError:
            raise ToolError("the search API's answer is not JSON") from None
        return ToolResult(f"Results for {query!r}:\n" + format_results(data, api, count))


def search_api_tool(table: Any, mode: str, wire_api: str) -> tuple[Tool | None, str | None]:
    """The tool when a search API is configured, search is on and the server has no search of its
    own; else None. The second value is a configuration problem to report."""
    if table is None or mode == "off" or wire_api != "chat":
        return None, None
    if not isinstance(table, dict):
        return None, "`web_search_api` must be a table"
    try:
        return WebSearchApiTool(SearchApi.from_table(table)), None
    except ValueError as exc:
        return None, str(exc)

"""Provider-side web search through `agent exec --json`: the request carries the provider's tool,
and the streamed search and citations become a `web_search` item and an answer with citations."""

from __future__ import annotations

import json

import pytest

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, WebSearch

SEARCH = WebSearch(
    "textual markdown stream",
    [{"title": "Markdown - Textual", "url": "https://textual.textualize.io/widgets/markdown/"}],
)
TOOLS = {
    "responses": {"type": "web_search", "external_web_access": True},
    "anthropic": {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
}


@pytest.mark.parametrize(("provider", "protocol"), [("openai", "responses"), ("anthropic", "anthropic")])
def test_search_results_and_citations_reach_json(server, tmp_path, provider, protocol):
    server.script(Reply(text="Use Markdown.get_stream().", web_search=SEARCH))
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gpt-5"
    result = run_agent(
        ["exec", "--provider", provider, "-m", model, "--json", "-c", 'web_search="live"', "how?"],
        cwd=tmp_path,
        env=provider_env(server, provider),
    )
    assert result.returncode == 0, result.stderr
    items = [json.loads(line)["item"] for line in result.stdout.splitlines() if '"item.completed"' in line]
    search = next(item for item in items if item["type"] == "web_search")
    assert search["query"] == SEARCH.query
    assert [r["url"] for r in search["results"]] == [r["url"] for r in SEARCH.results]  # OpenAI reports URLs only
    if protocol == "anthropic":
        assert search["results"] == SEARCH.results
    answer = next(item for item in items if item["type"] == "agent_message")
    assert answer["text"] == "Use Markdown.get_stream()." and answer["citations"] == SEARCH.results
    assert TOOLS[protocol] in server.requests[0].body["tools"]


def test_exec_does_not_search_unless_configured(server, tmp_path):
    server.script(Reply(text="ok"))
    result = run_agent(
        ["exec", "--provider", "openai", "-m", "gpt-5", "--json", "hi"],
        cwd=tmp_path,
        env=provider_env(server, "openai"),
    )
    assert result.returncode == 0, result.stderr
    assert all(tool.get("type") == "function" for tool in server.requests[0].body["tools"])


def test_cached_mode_asks_openai_for_its_index_only(server, tmp_path):
    server.script(Reply(text="ok"))
    run_agent(
        ["exec", "--provider", "openai", "-m", "gpt-5", "-c", 'web_search="cached"', "hi"],
        cwd=tmp_path,
        env=provider_env(server, "openai"),
    )
    assert {"type": "web_search", "external_web_access": False} in server.requests[0].body["tools"]

"""Agent definition files and where they are found."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.agents.definition import parse_agent_file
from agent_cli.agents.discovery import load_agents
from agent_cli.agents.task_tool import MAX_LISTED_AGENTS, task_spec


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def agent_text(name: str, extra: str = "", body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: The {name} agent.\n{extra}---\n{body}\n"


@pytest.mark.parametrize(
    ("tools", "expected", "ignored"),
    [
        ("tools: Read, Grep, Glob, LS", ("read_file", "grep", "list_dir"), ""),
        ("tools: [Bash, Edit, MultiEdit, Write, TodoWrite]", ("shell", "apply_patch", "update_plan"), ""),
        ("tools: read_file, Bash(git diff:*), Task", ("read_file", "shell", "task"), ""),
        ("tools: Read, WebFetch, NotebookEdit", ("read_file", "web_fetch"), "NotebookEdit"),
        ("tools: Bash, BashOutput, KillShell", ("shell", "shell_output", "shell_kill"), ""),
        (
            "tools: memory_search, mcp__github__get_issue, mcp__db",
            ("memory_search", "mcp__github__get_issue", "mcp__db"),
            "",
        ),
        ("", None, ""),
    ],
)
def test_tools_are_mapped_from_claude_code_names(tmp_path, tools, expected, ignored):
    path = write(tmp_path / "a.md", agent_text("a", tools + "\n" if tools else ""))
    definition, warning = parse_agent_file(path, "repo")
    assert definition is not None and definition.tools == expected
    assert warning == (f"tools with no equivalent here are ignored: {ignored}" if ignored else "")


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ("tools: Read, Grep, Bash\ndisallowedTools: Bash", ("read_file", "grep")),
        (
            "disallowedTools: [Bash, Edit, Task, mcp_call, mcp_search, memory_save, memory_search]",
            ("read_file", "grep", "list_dir", "update_plan"),
        ),
    ],
)
def test_disallowed_tools_are_taken_away(tmp_path, tools, expected):
    definition, _ = parse_agent_file(write(tmp_path / "a.md", agent_text("a", tools + "\n")), "repo")
    assert definition is not None and definition.tools == expected


@pytest.mark.parametrize(
    ("model", "wire_api", "expected"),
    [
        ("inherit", "anthropic", "current"),
        ("sonnet", "anthropic", "claude-sonnet-4-5"),
        ("haiku", "chat", "current"),
        ("gpt-5-mini", "responses", "gpt-5-mini"),
    ],
)
def test_model_aliases_mean_claude_models_only_on_anthropic(tmp_path, model, wire_api, expected):
    definition, _ = parse_agent_file(write(tmp_path / "a.md", agent_text("a", f"model: {model}\n")), "repo")
    assert definition.resolve_model("current", wire_api) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "missing YAML front matter"),
        ("---\nname: a\n---\nbody", "needs a `description`"),
        ("---\nname: [a\ndescription: x\n---\n", "invalid YAML front matter"),
        ("---\nname: two words\ndescription: x\n---\n", "`name` must be one word"),
        ("---\ndescription: x\ntools: 3\n---\n", "`tools` must be a comma-separated string or a list"),
    ],
)
def test_bad_files_say_why(tmp_path, text, problem):
    definition, why = parse_agent_file(write(tmp_path / "bad.md", text), "repo")
    assert definition is None and problem in why


def test_first_name_wins_and_bad_files_are_warnings(tmp_path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    write(repo / ".agent" / "agents" / "explore.md", agent_text("explore", body="Repository explorer."))
    write(repo / ".agent" / "agents" / "broken.md", "no front matter")
    write(home / "agents" / "explore.md", agent_text("explore", body="User explorer."))
    write(home / "agents" / "mine.md", agent_text("mine"))
    found = load_agents(repo, home)
    assert found.names == ["explore", "mine", "general"]
    assert found.get("explore").prompt == "Repository explorer." and found.get("explore").source == "repo"
    assert found.get("general").source == "bundled" and found.get("general").tools is None
    (warning,) = found.warnings
    assert warning.startswith(f"agent file {repo / '.agent' / 'agents' / 'broken.md'}: missing YAML front matter")


def test_extra_sources_are_namespaced(tmp_path):
    plugin = tmp_path / "plugin" / "agents"
    write(plugin / "reviewer.md", agent_text("reviewer", "tools: Read\n"))
    found = load_agents(tmp_path, tmp_path / "home", [("acme", plugin)])
    reviewer = found.get("acme:reviewer")
    assert reviewer is not None and reviewer.source == "plugin acme" and reviewer.tools == ("read_file",)
    assert found.get("explore").tools == ("read_file", "grep", "list_dir")


def test_the_task_tool_lists_agents_within_a_bound(tmp_path):
    home = tmp_path / "home"
    for index in range(MAX_LISTED_AGENTS + 5):
        write(home / "agents" / f"a{index:02d}.md", agent_text(f"a{index:02d}", body="x" * 10))
    spec = task_spec(load_agents(tmp_path, home))
    assert "- a00: The a00 agent." in spec.description
    assert "(and 7 more: " in spec.description  # 35 + general + explore listed beyond the bound
    assert spec.parameters["required"] == ["agent", "description", "prompt"]


def test_an_mcp_server_name_allows_each_of_its_tools(tmp_path):
    path = write(tmp_path / "a.md", agent_text("a", "tools: Read, mcp__db\n"))
    definition, _ = parse_agent_file(path, "repo")
    assert definition.allows("read_file") and definition.allows("mcp__db__query")
    assert not definition.allows("shell") and not definition.allows("mcp__dbx__query")

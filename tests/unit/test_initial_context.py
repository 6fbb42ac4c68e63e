import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from agent_cli.context.fragments import is_contextual_fragment, is_real_user_message
from agent_cli.context.initial import build_initial_context, build_instructions, permissions_text
from agent_cli.context.modes import MODES, mode_change_fragment, mode_guidance, tools_for_mode
from agent_cli.context.truncate import approx_tokens
from tests.conftest import git_init

NOW = datetime(2025, 5, 6, 12, 0, tzinfo=timezone.utc)
ALL_TOOLS = ["shell", "read_file", "grep", "list_dir", "apply_patch", "update_plan"]
TOKEN_LIMIT = 5_000


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AGENT_HOME", str(home))
    return home


def test_items_in_order_for_a_subdirectory_of_a_repo(tmp_path, home):
    repo = git_init(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("ROOT RULES")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "AGENTS.md").write_text("PKG RULES")
    cwd = repo / "pkg"
    ctx = build_initial_context(cwd, home, writable_roots=[cwd], now=NOW)
    developer, agents, skills, environment = ctx.items
    assert developer.role == "developer" and developer.text.startswith("<permissions>")
    assert "`workspace-write`" in developer.text and "`on-request`" in developer.text
    assert agents.role == skills.role == environment.role == "user"
    assert agents.text.startswith(f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>")
    assert agents.text.index("ROOT RULES") < agents.text.index("PKG RULES")
    assert skills.text.startswith("<skills>") and "- commit: " in skills.text
    assert "# Preparing a commit" not in skills.text  # bodies stay out until needed
    assert f"<cwd>{cwd}</cwd>" in environment.text and f"<root>{cwd}</root>" in environment.text
    assert all(is_contextual_fragment(item.text) and not is_real_user_message(item) for item in ctx.items)
    assert ctx.environment.current_date == NOW.astimezone().date().isoformat()
    assert {s.name for s in ctx.skills} >= {"commit", "skill-creator"}
    assert [f.text for f in ctx.project_docs.files] == ["ROOT RULES", "PKG RULES"]
    assert ctx.warnings == ()


def test_empty_repository_has_no_agents_fragment(tmp_path, home):
    repo = git_init(tmp_path / "empty")
    ctx = build_initial_context(repo, home, now=NOW)
    assert [item.text.split("\n", 1)[0] for item in ctx.items] == ["<permissions>", "<skills>", "<environment_context>"]


def test_byte_stable_for_the_same_inputs(tmp_path, home):
    repo = git_init(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("rules")
    first = build_initial_context(repo, home, now=NOW)
    second = build_initial_context(repo, home, now=NOW)
    assert first.items == second.items
    assert build_instructions("agent", home) == build_instructions("agent", home)


def test_warnings_are_collected_for_the_user(tmp_path, home):
    repo = git_init(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("x" * 100)
    bad = repo / ".agent" / "skills" / "broken"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no front matter")
    ctx = build_initial_context(repo, home, project_doc_max_bytes=10, now=NOW)
    assert any("truncated" in w and "AGENTS.md" in w for w in ctx.warnings)
    assert any("broken" in w and "front matter" in w for w in ctx.warnings)


def test_user_overrides_change_the_system_prompt_and_permissions(tmp_path, home):
    (home / "prompts" / "permissions").mkdir(parents=True)
    (home / "prompts" / "identity.md").write_text("You are Custom.")
    (home / "prompts" / "permissions" / "approval_never.md").write_text("Never ask; just work.")
    instructions = build_instructions("agent", home)
    assert instructions.startswith("You are Custom.\n\n## Tools")
    ctx = build_initial_context(git_init(tmp_path / "r"), home, approval_policy="never", now=NOW)
    assert "Never ask; just work." in ctx.items[0].text


@pytest.mark.parametrize("mode", MODES)
def test_instructions_carry_the_mode(mode, home):
    instructions = build_instructions(mode, home)
    assert instructions.rstrip().endswith(mode_guidance(mode))
    assert f"## Mode: {mode}" in instructions
    assert "{" + "mode_guidance}" not in instructions


def test_bad_mode_and_policies_fail_clearly(tmp_path, home):
    with pytest.raises(ValueError, match="unknown mode 'yolo'; expected one of: agent, ask, plan"):
        build_instructions("yolo", home)
    with pytest.raises(ValueError, match="unknown mode"):
        build_initial_context(tmp_path, home, mode="yolo")
    with pytest.raises(ValueError, match="approval_policy 'sometimes'"):
        permissions_text("sometimes", "read-only", False)


@pytest.mark.parametrize("policy", ["untrusted", "on-request", "on-failure", "never"])
@pytest.mark.parametrize("sandbox", ["read-only", "workspace-write", "danger-full-access"])
def test_every_policy_and_sandbox_has_rules(policy, sandbox, home):
    text = permissions_text(policy, sandbox, True)
    assert f"`{policy}`" in text and f"`{sandbox}`" in text and "Network access: enabled" in text


def test_tools_for_mode():
    assert tools_for_mode("agent", ALL_TOOLS) == ALL_TOOLS
    assert tools_for_mode("ask", ALL_TOOLS) == ["read_file", "grep", "list_dir"]
    assert tools_for_mode("plan", ALL_TOOLS) == ["read_file", "grep", "list_dir", "update_plan"]
    with pytest.raises(ValueError, match="unknown mode"):
        tools_for_mode("nope", ALL_TOOLS)


def test_mode_change_is_a_developer_fragment(home):
    message = mode_change_fragment("ask")
    assert message.role == "developer"
    assert message.text.startswith("<mode>\nThe user switched to ask mode.")
    assert mode_guidance("ask") in message.text


def tool_spec_tokens(repo: Path, home: Path) -> tuple[int, int]:
    from agent_cli.agents.discovery import load_agents
    from agent_cli.agents.task_tool import task_spec
    from agent_cli.memory.tools import memory_tools
    from agent_cli.tools import default_tools

    specs = [tool.spec for tool in default_tools() + memory_tools()] + [task_spec(load_agents(repo, home))]
    payload = [
        {"type": "function", "name": s.name, "description": s.description, "parameters": s.parameters} for s in specs
    ]
    return len(specs), approx_tokens(json.dumps(payload))


def fixed_overhead(repo: Path, home: Path) -> tuple[int, int]:
    system = approx_tokens(build_instructions("agent", home))
    context = sum(approx_tokens(item.text) for item in build_initial_context(repo, home, now=NOW).items)
    return system, context


def test_fixed_overhead_without_tools_leaves_room_for_the_tool_schemas(tmp_path, home):
    system, context = fixed_overhead(git_init(tmp_path / "empty"), home)
    assert 1_000 <= system <= 2_000
    assert system + context <= TOKEN_LIMIT - 1_500


def test_fixed_overhead_with_tool_schemas_is_under_5000_tokens(tmp_path, home):
    repo = git_init(tmp_path / "empty")
    count, tools = tool_spec_tokens(repo, home)
    system, context = fixed_overhead(repo, home)
    assert count >= 7
    assert system + tools + context < TOKEN_LIMIT, f"system {system} + tools {tools} + context {context}"

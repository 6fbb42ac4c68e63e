"""What the model sees, checked on the fake server's recorded requests through `agent exec`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall


def request_text(request) -> str:
    return json.dumps(request.body, ensure_ascii=False)


def git_repo(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    (repo / "sub").mkdir()
    (repo / "AGENTS.md").write_text("ROOT-RULE: use tabs\n")
    (repo / "sub" / "AGENTS.md").write_text("SUB-RULE: run make test\n")
    return repo


def test_first_request_carries_agents_md_root_first_skills_list_and_environment(server, tmp_path):
    repo = git_repo(tmp_path)
    server.script(Reply(text="ok"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "hi"],
        cwd=repo / "sub",
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    text = request_text(server.requests[0])
    assert f"# AGENTS.md instructions for {repo / 'sub'}" in text
    assert text.index("ROOT-RULE") < text.index("SUB-RULE")
    assert "<skills>" in text and "commit" in text
    assert "# Preparing a commit" not in text  # bodies are loaded on demand only
    assert f"<cwd>{repo / 'sub'}</cwd>" in text


def is_prefix(earlier: list, later: list) -> bool:
    return later[: len(earlier)] == earlier


def test_every_request_extends_the_previous_one_byte_for_byte(server, tmp_path):
    """Over a multi-step turn and a second turn (resumed) the prompt prefix never changes."""
    server.script(
        Reply(text="step 1", tool_calls=[ToolCall("shell", {"command": "echo one"})]),
        Reply(tool_calls=[ToolCall("list_dir", {"path": "."}), ToolCall("shell", {"command": "echo two"})]),
        Reply(text="first turn done"),
    )
    env = provider_env(server, "openai-chat")
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "m", "do it"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    bodies = [request.body for request in server.requests]
    for earlier, later in zip(bodies, bodies[1:]):
        assert earlier["tools"] == later["tools"]
        assert is_prefix(earlier["messages"], later["messages"])
        # byte-level: the serialized earlier conversation is a prefix of the later one
        assert (
            json.dumps(later["messages"])[: len(json.dumps(earlier["messages"])) - 1]
            == json.dumps(earlier["messages"])[:-1]
        )


def test_huge_command_output_reaches_the_model_as_head_marker_tail_with_spill_file(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "seq 1 300000"})]), Reply(text="seen"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "count"], cwd=tmp_path, env=provider_env(server, "openai-chat")
    )
    assert result.returncode == 0, result.stderr
    output = next(m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool")
    # a login shell's profile may print a line of its own before the command's output
    total = int(re.search(r"Total output lines: (\d+)", output).group(1))
    assert 300_000 <= total <= 300_005
    assert re.search(r"…\d+ (chars|tokens) truncated…", output)
    assert "\n1\n" in output and "\n300000" in output  # head and tail both survive
    assert len(output) < 60_000
    spill = re.search(r"(/\S+tool-outputs/\S+)", output)
    assert spill, output[:500]
    full = Path(spill.group(1).rstrip(".,;)'\"")).read_text()
    assert full.splitlines()[-300_000:] == [str(n) for n in range(1, 300_001)]

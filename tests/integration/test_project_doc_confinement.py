"""Nothing outside the repository, and nothing a Read deny rule hides, reaches the model as a project
doc or a command file (issue 33, item 4): checked in the requests the fake server received from a
real `agent exec` run."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image as PILImage

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply

OUTSIDE = "outside-s3cr3t"
HIDDEN = "hidden-s3cr3t"


def exec_prompt(server, repo, *extra: str) -> str:
    server.script(Reply(text="ok"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "test-model", *extra, "hello"],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    return json.dumps([request.body for request in server.requests])


@pytest.mark.parametrize("trust", [[], ["--trust"]])
def test_fallback_names_never_reach_outside_the_repository(server, tmp_path, isolated_home, trust):
    (tmp_path / "secret.txt").write_text(OUTSIDE + "-dotdot\n")
    (tmp_path / "elsewhere").mkdir()
    absolute = tmp_path / "elsewhere" / "notes.txt"
    absolute.write_text(OUTSIDE + "-absolute\n")
    repo = git_init(tmp_path / "repo")
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text(
        f'project_doc_fallback_filenames = [{json.dumps(str(absolute))}, "../secret.txt"]\n'
    )
    sent = exec_prompt(server, repo, *trust)
    assert OUTSIDE not in sent


def test_a_symlinked_agents_md_leading_outside_is_not_sent(server, tmp_path, isolated_home):
    (tmp_path / "secret.txt").write_text(OUTSIDE + "\n")
    repo = git_init(tmp_path / "repo")
    (repo / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    assert OUTSIDE not in exec_prompt(server, repo, "--trust")


def test_a_read_deny_rule_hides_a_symlinked_agents_md(server, tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / "private").mkdir()
    (repo / "private" / "notes.md").write_text(HIDDEN + "\n")
    (repo / "AGENTS.md").symlink_to(repo / "private" / "notes.md")
    sent = exec_prompt(server, repo, "-c", 'permissions.deny=["Read(./private/**)"]')
    assert HIDDEN not in sent
    # The same file is sent when no rule hides it: the test can fail.
    server.requests.clear()
    assert HIDDEN in exec_prompt(server, repo)


def test_command_files_hidden_by_a_rule_or_leading_outside_are_not_sent(server, tmp_path, isolated_home):
    (tmp_path / "secret.md").write_text(OUTSIDE + "\n")
    repo = git_init(tmp_path / "repo")
    commands = repo / ".agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "leak.md").symlink_to(tmp_path / "secret.md")
    (repo / "private").mkdir()
    (repo / "private" / "notes.md").write_text(HIDDEN + "\n")
    (commands / "peek.md").symlink_to(repo / "private" / "notes.md")
    rule = ["-c", 'permissions.deny=["Read(./private/**)"]']
    for command in ("/leak", "/peek"):
        server.requests.clear()
        server.script(Reply(text="ok"))
        result = run_agent(
            ["exec", "--provider", "openai-chat", "-m", "test-model", *rule, command],
            cwd=repo,
            env=provider_env(server, "openai-chat"),
        )
        sent = json.dumps([request.body for request in server.requests]) + result.stdout
        assert OUTSIDE not in sent and HIDDEN not in sent


def test_an_image_a_read_deny_rule_hides_is_not_attached(server, tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / "private").mkdir()
    picture = io.BytesIO()
    PILImage.new("RGB", (8, 8), "red").save(picture, format="PNG")
    (repo / "private" / "shot.png").write_bytes(picture.getvalue())
    server.script(Reply(text="ok"))
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "-c",
            "model_supports_images=true",
            "-c",
            'permissions.deny=["Read(./private/**)"]',
            "-i",
            "private/shot.png",
            "describe it",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert "image" not in json.dumps([request.body for request in server.requests])
    assert "Read(./private/**)" in result.stderr

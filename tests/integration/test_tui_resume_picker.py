"""`agent resume` with no id, in a real terminal: the app's searchable session picker, newest
first (this repository's worktree sessions among this directory's), not a numbered prompt
(issue 51, item 11)."""

from __future__ import annotations

import pytest

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply
from tests.tmux_terminal import TMUX, TmuxTerminal, agent_command
from tests.waiting import wait_for
from tests.worktree_helpers import committed_repo

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (.ci/run installs it)")
CHAT = ["--provider", "openai-chat", "-m", "test-model"]


def saved(server, repo, prompt: str, *options: str) -> None:
    server.script(Reply(text=f"answer to {prompt}"))
    result = run_agent(["exec", *CHAT, *options, prompt], cwd=repo, env=provider_env(server, "chat"))
    assert result.returncode == 0, result.stderr


def test_resume_without_an_id_opens_the_searchable_picker_newest_first(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    other = tmp_path / "elsewhere"
    other.mkdir()
    saved(server, other, "question from elsewhere")
    saved(server, repo, "older question here")
    saved(server, repo, "newest question in a worktree", "--worktree", "wt1")
    env = {"AGENT_HOME": str(isolated_home), **provider_env(server, "chat")}
    terminal = TmuxTerminal(agent_command(["resume", *CHAT]), repo, env)
    try:
        shown = terminal.wait_for_text("Resume a session")
        assert "Resume which session?" not in shown  # not the numbered prompt
        lines = shown.splitlines()

        def row(prompt: str) -> int:
            return next(at for at, line in enumerate(lines) if prompt in line)

        assert row("newest question in a worktree") < row("older question here") < row("question from elsewhere")
        assert "worktree wt1" in shown
        terminal.type("older")  # the filter
        wait_for(
            lambda: "question from elsewhere" not in (screen := terminal.screen()) and "older question here" in screen,
            within=30,
            what="the list filtered",
        )
        server.script(Reply(text="carried on"))
        terminal.keys("Enter")
        terminal.wait_for_text("answer to older question here")  # the app on that session
    finally:
        terminal.close()

"""A multi-line paste in a real terminal (tmux pastes with CR line ends, as xterm and VTE do):
the chip counts the lines a person counts and the request carries them as lines (issue 51, item 1)."""

from __future__ import annotations

import pytest

from tests.conftest import provider_env
from tests.fake_server import Reply
from tests.tmux_terminal import TMUX, TmuxTerminal, agent_command
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (.ci/run installs it)")


@pytest.mark.parametrize("trailing", [True, False], ids=["ends with a new line", "no new line at the end"])
def test_a_164_line_paste_in_tmux_is_164_lines(server, tmp_path, isolated_home, trailing):
    work = tmp_path / "work"
    work.mkdir()
    server.script(Reply(text="got it"))
    env = {"AGENT_HOME": str(isolated_home), **provider_env(server, "openai-chat")}
    terminal = TmuxTerminal(agent_command(["--provider", "openai-chat", "-m", "test-model"]), work, env)
    try:
        terminal.wait_for_text("Ask anything")
        pasted = "\n".join(f"log line {n}" for n in range(1, 165)) + ("\n" if trailing else "")
        terminal.paste(pasted)  # tmux turns each LF into CR, as a terminal sends Enter
        terminal.wait_for_text("[Pasted text #1 +164 lines]", within=30)
        terminal.keys("Enter")
        wait_for(lambda: server.requests, within=30, what="the request")
    finally:
        terminal.close()
    sent = str(server.requests[0].body["messages"][-1]["content"])
    assert "\r" not in sent
    assert sent.count("\n") >= 163 and "log line 1\nlog line 2\n" in sent and "log line 163\nlog line 164" in sent

"""``/export`` and ``agent sessions export``: a session with tool calls written as Markdown and read
back (prompts, answers, each call's output and diff), the same both ways."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from tests import session_helpers
from tests.conftest import run_agent
from tests.fake_server import Reply, ToolCall

PATCH = "*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+use ``` fences\n*** End Patch\n"
TRICKY = "output with ``` a fence and </details> a tag"


def read_back(markdown: str) -> dict[str, list[str]]:
    """The conversation in an export: each section's text, and each fenced block in order."""
    sections = re.findall(r"^## (You|Agent)\n\n(.*?)(?=\n\n## |\n\n<details>|\Z)", markdown, re.DOTALL | re.MULTILINE)
    fences = [body for _, body in re.findall(r"^(`{3,})[a-z]*\n(.*?)\n\1$", markdown, re.DOTALL | re.MULTILINE)]
    return {
        "you": [text.strip() for who, text in sections if who == "You"],
        "agent": [text.strip() for who, text in sections if who == "Agent"],
        "fences": fences,
    }


class Details(HTMLParser):
    def __init__(self):
        super().__init__()
        self.depth = self.opened = 0
        self.summaries: list[str] = []
        self._in_summary = False

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.depth += 1
            self.opened += 1
        self._in_summary = tag == "summary"

    def handle_endtag(self, tag):
        if tag == "details":
            self.depth -= 1
        self._in_summary = False

    def handle_data(self, data):
        if self._in_summary:
            self.summaries.append(data)


async def test_export_round_trips_a_session_with_tool_calls(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    session = session_helpers.make_session(
        server, repo, monkeypatch, 'sandbox_mode="danger-full-access"', 'approval_policy="never"'
    )
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"printf '%s\\n' '{TRICKY}'"})]),
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})]),
        Reply(text="I printed it and wrote **notes.md**."),
        Reply(text="Nothing else to do."),
    )
    async for _ in submit(session, "print the tricky line, then write notes"):
        pass
    async for _ in submit(session, "anything else?"):
        pass
    events = [event async for event in submit(session, "/export out/conversation.md")]
    assert any(isinstance(e, ev.Notice) and "conversation.md" in e.text for e in events)
    markdown = (repo / "out" / "conversation.md").read_text()

    back = read_back(markdown)
    assert back["you"] == ["print the tricky line, then write notes", "anything else?"]
    assert back["agent"] == ["I printed it and wrote **notes.md**.", "Nothing else to do."]
    assert f"printf '%s\\n' '{TRICKY}'" in back["fences"]  # the command
    assert any(TRICKY in fence and "Exit code: 0" in fence for fence in back["fences"])  # its output, whole
    assert "+# Notes\n+use ``` fences" in "\n".join(back["fences"])  # the patch as a diff
    # Markdown renders a fenced block's text as text: the HTML around the blocks is what folds.
    outside = re.sub(r"^(`{3,})[a-z]*\n.*?\n\1$", "", markdown, flags=re.DOTALL | re.MULTILINE)
    assert "</details> a tag" in markdown and "</details> a tag" not in outside  # escaped in summaries
    details = Details()
    details.feed(outside)
    assert details.opened == 2 and details.depth == 0  # each call folded once, every block closed
    assert details.summaries[0].startswith("shell: printf") and details.summaries[0].endswith("(exit 0)")
    assert details.summaries[1] == "apply_patch: patch (ok)"

    # Without a file it goes to the front end (the TUI's clipboard); the shell gets the same text.
    (action,) = [e for e in [e async for e in submit(session, "/export")] if isinstance(e, ev.CommandAction)]
    assert action.action == "export" and action.argument == markdown
    await session.aclose()
    result = run_agent(["sessions", "export", session.id], cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout == markdown
    written = tmp_path / "last.md"
    result = run_agent(["sessions", "export", "--last", "-o", str(written)], cwd=repo)
    assert result.returncode == 0 and written.read_text() == markdown, result.stderr


async def test_export_of_an_empty_session_is_an_error(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    session = session_helpers.make_session(server, repo, monkeypatch)
    events = [event async for event in submit(session, "/export")]
    await session.aclose()
    assert any("no conversation to export" in getattr(e, "message", "") for e in events)

"""Commands longer than the kernel allows for one argument run, with and without the sandbox,
and progress output shows only their first lines (fault 2 of issue 16)."""

from __future__ import annotations

import io

import pytest

from agent_cli import events as ev
from agent_cli.display import command_preview
from agent_cli.headless.render_text import TextRenderer
from agent_cli.sandbox.policy import SandboxPolicy, detect_mechanism, working_mechanisms
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import ShellTool

BODY = "".join(f"line {n} of a file written by a heredoc\n" for n in range(8000))  # ~330 KB
HEREDOC = f"cat > written.txt <<'EOF'\n{BODY}EOF\nwc -l < written.txt"


@pytest.fixture
def forced_mechanism(monkeypatch):
    """Force a sandbox mechanism for one test (detect_mechanism caches its answer)."""

    def force(name: str) -> None:
        monkeypatch.setenv("AGENT_SANDBOX_MECHANISM", name)
        detect_mechanism.cache_clear()

    yield force
    detect_mechanism.cache_clear()


@pytest.mark.parametrize("mechanism", [None, *working_mechanisms()])
async def test_a_heredoc_of_hundreds_of_kilobytes_runs(tmp_path, forced_mechanism, mechanism):
    assert len(HEREDOC.encode()) > 300_000
    sandbox = None
    if mechanism is not None:
        forced_mechanism(mechanism)
        sandbox = SandboxPolicy.create("workspace-write", tmp_path, [])
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", sandbox=sandbox)
    result = await ShellTool().run({"command": HEREDOC}, ctx)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("8000")
    assert (tmp_path / "written.txt").read_text() == BODY
    assert not list((tmp_path / "data" / "tool-commands").iterdir())  # the script file is gone


def test_progress_shows_the_first_lines_of_a_long_command():
    shown = command_preview(HEREDOC)
    assert shown.startswith("cat > written.txt <<'EOF'\nline 0 of")
    assert "more lines" in shown and "KB in all" in shown and len(shown) < 500
    assert command_preview("ls -la") == "ls -la"

    out = io.StringIO()
    TextRenderer(out, color=False).render(ev.ToolCallBegin("c1", "shell", {"command": HEREDOC}))
    assert len(out.getvalue()) < 500 and "(8,000 more lines, 319 KB in all)" in out.getvalue()


def test_the_tui_cell_header_shows_the_first_lines():
    from agent_cli.tui.widgets.tool_cell import describe_call

    assert describe_call("shell", {"command": HEREDOC}) == command_preview(HEREDOC)

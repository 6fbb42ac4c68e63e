"""The status line under the composer: a real third-party status line (ccstatusline, from npm,
installed by .ci/run into tests/statusline) fed our session JSON renders in the TUI; our JSON has
Claude Code's fields; colours become styles; the line follows the session."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from agent_cli.status_line.payload import StatusFacts, diff_lines, session_json
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_idle, wait_until

CCSTATUSLINE = Path(__file__).parents[1] / "statusline" / "node_modules" / "ccstatusline" / "dist" / "ccstatusline.js"
CLAUDE_FIELDS = {
    "session_id",
    "transcript_path",
    "cwd",
    "model",
    "workspace",
    "version",
    "output_style",
    "cost",
    "context_window",
    "exceeds_200k_tokens",
}
COST_FIELDS = {
    "total_cost_usd",
    "total_duration_ms",
    "total_api_duration_ms",
    "total_lines_added",
    "total_lines_removed",
}


def user_status_line(home: Path, command: str) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": command}}))


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed (ccstatusline runs on it)")
@pytest.mark.skipif(
    not CCSTATUSLINE.is_file(), reason="ccstatusline is not installed: npm install --prefix tests/statusline"
)
async def test_ccstatusline_renders_its_line_from_our_json(make_app, server, tmp_path):
    user_status_line(tmp_path, f"node {CCSTATUSLINE}")  # HOME is tmp_path here: the user's own settings
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.status_line.runs >= 1, timeout=30, what="ccstatusline")
        line = app.status_line.line.replace("\xa0", " ")  # it spaces its parts with no-break spaces
        assert "Model: test-model" in line, (line, app.status_line.problem)
        assert "⎇ master" in line  # its git part ran in the session's folder
        assert app.status_line.display
        rendered = app.status_line.render()
        assert any(span.style for span in rendered.spans), "its ANSI colours became styles"
        assert "\x1b" not in app.status_line.line


async def test_our_json_has_claude_codes_fields_and_the_line_follows_the_session(make_app, server, tmp_path, repo):
    seen = tmp_path / "seen.jsonl"
    script = tmp_path / "line.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "cost = data['cost']\n"
        "print(f\"\\x1b[32m{data['model']['display_name']}\\x1b[0m +{cost['total_lines_added']} -{cost['total_lines_removed']}\")\n"
        "print('second line is not shown')\n"
    )
    user_status_line(tmp_path, f"{sys.executable} {script}")
    patch = "*** Begin Patch\n*** Add File: new.txt\n+one\n+two\n*** End Patch\n"
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="added"))
    app = make_app('approval_policy="never"')
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.status_line.line == "test-model +0 -0", what="first line")
        (style,) = {str(span.style) for span in app.status_line.render().spans}
        assert "green" in style
        app.send("add a file")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: app.status_line.line == "test-model +2 -0", what="line after the patch")
    data = json.loads(seen.read_text().splitlines()[-1])
    assert CLAUDE_FIELDS <= set(data) and COST_FIELDS <= set(data["cost"])
    assert data["model"] == {"id": "test-model", "display_name": "test-model"}
    assert data["workspace"] == {"current_dir": str(repo), "project_dir": str(repo)}
    assert data["session_id"] == app.session.id and data["transcript_path"] == str(app.session.rollout.path)


async def test_a_failing_command_blanks_the_line_and_none_configured_hides_it(make_app, server, tmp_path):
    user_status_line(tmp_path, "echo partial; exit 3")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.status_line.runs >= 1, what="a run")
        assert app.status_line.line == "" and not app.status_line.display
        assert "exit code 3" in (app.status_line.problem or "")
    (tmp_path / ".claude" / "settings.json").unlink()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        assert app.status_line.setting is None and app.status_line.runs == 0


def test_diff_lines_leave_headers_out():
    assert diff_lines("--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-old\n+new\n+more\n") == (2, 1)


def test_facts_start_empty(make_config):
    from agent_cli.runtime import open_session

    session = open_session(make_config(), interactive=True)
    data = session_json(session, StatusFacts())
    assert data["cost"]["total_lines_added"] == 0 and data["exceeds_200k_tokens"] is False


def test_precedence_and_trust(make_config, repo, tmp_path):
    from agent_cli.status_line.setting import find_status_line

    def write(folder: Path, name: str, command: str) -> None:
        (folder / ".claude").mkdir(exist_ok=True)
        (folder / ".claude" / name).write_text(json.dumps({"statusLine": {"type": "command", "command": command}}))

    config = make_config()
    assert find_status_line(config, trusted=True) == (None, [])
    write(tmp_path, "settings.json", "user-line")  # ~/.claude (HOME is tmp_path)
    write(repo, "settings.json", "project-line")
    assert find_status_line(config, trusted=False)[0].command == "user-line"  # a repository's waits for trust
    assert find_status_line(config, trusted=True)[0].command == "project-line"
    write(repo, "settings.local.json", "local-line")
    assert find_status_line(config, trusted=True)[0].command == "local-line"
    ours = make_config('status_line={type="command", command="ours"}')
    assert find_status_line(ours, trusted=True)[0].command == "ours"
    (repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    assert find_status_line(config, trusted=True) == (None, [])  # Claude's switch turns it off


def test_a_repository_status_line_is_listed_for_trust(make_config, repo):
    from agent_cli.trust.inventory import take_inventory

    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "statusLine": {"type": "command", "command": "./line.sh"},
                "hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/x"}]}]},
            }
        )
    )
    lines = [item.line() for item in take_inventory(make_config()).items]
    assert "status line statusLine: ./line.sh  (.claude/settings.json)" in lines
    assert "hook Stop: http://127.0.0.1:9/x  (.claude/settings.json)" in lines

"""SessionEnd from the TUI: ``/new`` ends the old session with reason clear (the next SessionStart
says clear), ``/quit`` with prompt_input_exit. The hooks are the user's, in ~/.claude/settings.json,
which load without trusting the folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_idle, wait_until

LOGGER = "import json, sys; open(sys.argv[1], 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')"


def user_settings(home: Path, log: Path) -> None:
    script = home / "log_hook.py"
    script.write_text(LOGGER)
    hook = {"hooks": [{"type": "command", "command": f"{sys.executable} {script} {log}"}]}
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionEnd": [hook], "SessionStart": [hook]}})
    )


def logged(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [(e["hook_event_name"], e.get("reason") or e.get("source")) for e in entries]


async def test_new_ends_with_clear_and_quit_with_prompt_input_exit(make_app, server, repo, tmp_path):
    log = tmp_path / "hooks.jsonl"
    user_settings(tmp_path, log)  # HOME is tmp_path in the TUI tests
    server.script(Reply(text="first"), Reply(text="second"))
    app = make_app("trust_repository=false")
    async with app.run_test(size=SIZE) as pilot:
        app.send("hello")
        await wait_idle(pilot)
        app.send("/new")
        await wait_until(pilot, lambda: ("SessionEnd", "clear") in logged(log), what="SessionEnd clear")
        app.send("again")
        await wait_idle(pilot)
        app.send("/quit")
        await wait_until(pilot, lambda: not app.is_running, what="quit")
    assert logged(log) == [
        ("SessionStart", "startup"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit"),
    ]

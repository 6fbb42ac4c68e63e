"""Getting the user's attention: terminal notifications while the terminal is unfocused, the
terminal title, the Notification hook's idle_prompt, Codex's notify program after a turn."""

from __future__ import annotations

import json
import sys

from agent_cli.tui import attention as attention_module
from agent_cli.tui.attention import notification_sequence, notification_settings
from agent_cli.tui.screens.approval import ApprovalScreen
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until

UNTRUSTED = 'approval_policy="untrusted"'


def captured(app) -> list[str]:
    writes: list[str] = []
    app.attention.write = writes.append
    return writes


def titles(writes: list[str]) -> list[str]:
    return [w[4:-1] for w in writes if w.startswith("\x1b]2;")]


def notifications(writes: list[str]) -> list[str]:
    return [w for w in writes if w.startswith(("\x1b]9;", "\x1b]777;")) or w == "\x07"]


async def test_unfocused_terminal_is_notified_of_approvals_and_turn_ends(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch made.txt"})]), Reply(text="made the file"))
    app = make_app(UNTRUSTED, 'tui.notification_method="osc9"')
    writes = captured(app)
    async with app.run_test(size=SIZE) as pilot:
        app.on_app_blur()  # the user switched away (a focus-out report)
        await type_text(pilot, "make a file\nplease")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        assert notifications(writes) == ["\x1b]9;Approval needed: shell: touch made.txt\x07"]
        assert titles(writes)[-1] == "make a file · waiting for approval · agent"
        await pilot.press("y")
        await wait_idle(pilot)
    assert notifications(writes)[-1] == "\x1b]9;Agent turn complete: made the file\x07"
    assert "make a file · working · agent" in titles(writes)
    assert "make a file · waiting for you · agent" in titles(writes)
    assert writes[0] == "\x1b[22;0t" and writes[-1] == "\x1b[23;0t"  # the terminal's own title comes back


async def test_a_focused_terminal_is_not_notified(make_app, server, repo):
    server.script(Reply(text="hello"))
    app = make_app()
    writes = captured(app)
    async with app.run_test(size=SIZE) as pilot:
        app.on_app_blur()
        app.on_app_focus()
        app.send("hi")
        await wait_idle(pilot)
    assert notifications(writes) == []


async def test_idle_prompt_runs_the_notification_hook(make_app, server, repo, tmp_path, monkeypatch):
    monkeypatch.setattr(attention_module, "IDLE_SECONDS", 0.3)
    log = tmp_path / "notified.jsonl"
    hook = f"{sys.executable} -c \"import sys; open('{log}', 'a').write(sys.stdin.read() + chr(10))\""
    (tmp_path / ".claude").mkdir()
    settings = {
        "hooks": {"Notification": [{"matcher": "idle_prompt", "hooks": [{"type": "command", "command": hook}]}]}
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    server.script(Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("hi")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: log.exists(), what="the idle notification")
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["hook_event_name"] == "Notification" and entry["notification_type"] == "idle_prompt"
    assert entry["message"] == "agent is waiting for your input"


async def test_codex_notify_runs_after_each_turn_with_the_event_json(make_app, server, repo, tmp_path):
    out = tmp_path / "notify.jsonl"
    script = tmp_path / "notify.py"
    script.write_text(f"import sys\nopen({str(out)!r}, 'a').write(sys.argv[-1] + '\\n')\n")
    server.script(Reply(text="first answer"), Reply(text="second answer"))
    app = make_app(f'notify=["{sys.executable}", "{script}"]')
    async with app.run_test(size=SIZE) as pilot:
        app.send("one")
        await wait_idle(pilot)
        app.send("two")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: out.exists() and len(out.read_text().splitlines()) == 2, what="two notifies")
    first, second = [json.loads(line) for line in out.read_text().splitlines()]
    assert first == {
        "type": "agent-turn-complete",
        "thread-id": app.session.id,
        "turn-id": "1",
        "cwd": str(repo),
        "input-messages": ["one"],
        "last-assistant-message": "first answer",
    }
    assert second["last-assistant-message"] == "second answer" and second["turn-id"] == "2"


def test_settings_and_sequences():
    assert notification_settings(None) == (frozenset({"agent-turn-complete", "approval-requested"}), "auto")
    assert notification_settings({"notifications": False})[0] == frozenset()
    assert notification_settings({"notifications": ["approval-requested"], "notification_method": "bell"}) == (
        frozenset({"approval-requested"}),
        "bell",
    )
    assert notification_sequence("osc777", "A;B", "line one\nline two") == "\x1b]777;notify;A,B;line one line two\x07"
    assert notification_sequence("osc9", "T", "evil\x1b]2;pwned\x07").count("\x07") == 1  # nothing ends it early


async def test_the_title_follows_new_and_resumed_sessions(make_app, server, repo):
    server.script(Reply(text="first answer"))
    app = make_app()
    writes = captured(app)
    async with app.run_test(size=SIZE) as pilot:
        app.send("fix the login bug")
        await wait_idle(pilot)
        first = app.session.id
        app.send("/new")
        await wait_until(pilot, lambda: app.session.id != first, what="a new session")
        assert titles(writes)[-1] == "ready · agent"
        app.send(f"/resume {first}")
        await wait_until(pilot, lambda: app.session.id == first, what="the resumed session")
        await wait_idle(pilot)
    assert "fix the login bug · ready · agent" in titles(writes)

"""Plugins in the TUI: --plugin-dir's commands in the `/` list, `/plugins` in the transcript."""

from __future__ import annotations

from dataclasses import replace

from agent_cli.tui.widgets.notice_cell import NoticeCell
from tests.plugin_fixtures import write_plugin
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_until


async def test_plugin_commands_are_offered_and_plugins_lists_them(make_config, server, tmp_path):
    from agent_cli.tui.app import AgentApp

    plugin = write_plugin(tmp_path / "dev", "kit", {"commands/greet.md": "---\ndescription: Greet someone\n---\nHi $1"})
    config = replace(make_config(), plugin_dirs=(plugin,))  # what `agent --plugin-dir DIR` does
    app = AgentApp(config, None)
    async with app.run_test(size=SIZE) as pilot:
        names = {command.name: command.description for command in app.commands.list_commands()}
        assert names["kit:greet"] == "Greet someone"
        app.send("/plugins")
        await wait_until(pilot, lambda: bool(app.transcript.query(NoticeCell)), what="the plugins notice")
        text = app.transcript.query(NoticeCell).last().text
        assert "kit 1.0.0  (--plugin-dir: " in text and "/kit:greet (also /greet)" in text
    assert not server.requests


async def test_a_broken_plugin_is_reported_when_the_app_starts_and_not_again_at_the_first_turn(
    make_config, server, tmp_path
):
    from agent_cli.tui.app import AgentApp

    write_plugin(tmp_path / "dev", "broken", {}, manifest='{"name": ')
    config = replace(make_config(), plugin_dirs=(tmp_path / "dev",))
    app = AgentApp(config, None)

    def warnings() -> list[str]:
        return [cell.text for cell in app.transcript.query(NoticeCell) if "plugin manifest" in cell.text]

    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(warnings()), what="the plugin warning, before any turn")
        assert "invalid JSON" in warnings()[0] and not server.requests
        server.script("hello")
        app.send("hi")
        await wait_until(pilot, lambda: len(server.requests) == 1 and not app.busy, what="the first turn")
        assert len(warnings()) == 1

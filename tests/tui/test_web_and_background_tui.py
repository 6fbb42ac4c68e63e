"""The TUI shows provider-side web searches with their sources, and background processes:
the status bar counts the running ones and an exit is shown the moment it happens."""

from __future__ import annotations

from agent_cli.tui.widgets.notice_cell import NoticeCell
from tests.fake_server import Reply, ToolCall, WebSearch
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until

SEARCH = WebSearch(
    "textual markdown stream",
    [{"title": "Markdown - Textual", "url": "https://textual.textualize.io/widgets/markdown/"}],
)


def notices(app, title: str) -> list[str]:
    return [cell.text for cell in app.transcript.query(NoticeCell) if cell.title == title]


async def test_a_web_search_and_the_answers_sources_are_shown(make_app, server):
    server.script(Reply(text="Use Markdown.get_stream().", web_search=SEARCH))
    app = make_app('model_provider="openai"', 'model="gpt-5"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "how do I stream markdown?")
        await pilot.press("enter")
        await wait_idle(pilot)
        (search,) = notices(app, "web search")
        assert SEARCH.query in search and SEARCH.results[0]["url"] in search
        (sources,) = notices(app, "sources")
        assert "[1] Markdown - Textual" in sources
    # the TUI searches by default, from OpenAI's index ("cached")
    assert {"type": "web_search", "external_web_access": False} in server.requests[0].body["tools"]


async def test_background_processes_are_counted_and_their_exit_shown_at_once(make_app, server):
    command = "sleep 3; echo bye; exit 2"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command, "run_in_background": True})]), Reply(text="started it")
    )
    app = make_app('sandbox_mode="danger-full-access"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start it")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.status.background == 1 and "1 background" in str(app.status.build_content())
        await wait_until(pilot, lambda: notices(app, "background"), timeout=15, what="the exit notice")
        (notice,) = notices(app, "background")
        assert "bg1" in notice and "exited with code 2" in notice and "bye" in notice
        assert app.status.background == 0


async def test_ps_lists_them_shows_output_and_stops_one(make_app, server):
    from agent_cli.tui.screens.processes import ProcessesScreen
    from tests.processes import alive, gone

    command = "for i in 1 2 3; do echo line $i; done; exec sleep 60"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command, "run_in_background": True})]), Reply(text="started it")
    )
    app = make_app('sandbox_mode="danger-full-access"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start it")
        await pilot.press("enter")
        await wait_idle(pilot)
        proc = app.session.background.get("bg1")
        assert alive(proc.pid)
        await type_text(pilot, "/ps")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ProcessesScreen), what="the /ps screen")
        await pilot.press("o")
        await wait_until(pilot, lambda: "line 3" in str(app.screen.query_one("#output").render()), what="output")
        await pilot.press("k")
        assert await gone(proc.pid, within=10)
        await wait_until(pilot, lambda: "stopped bg1" in str(app.screen.query_one("#output").render()), what="stop")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ProcessesScreen), what="the screen to close")

"""The TUI's pure helpers: input history file, fuzzy file matching, formatting; transcript pruning."""

from __future__ import annotations

import json

from textual.app import App

from agent_cli.tui.formatting import duration, preview_lines, tokens
from agent_cli.tui.input_history import InputHistory
from agent_cli.tui.repo_files import fuzzy_filter, list_files
from agent_cli.tui.widgets.assistant_message import AssistantMessage, closes_blocks
from agent_cli.tui.widgets.frozen_answer import FrozenAnswer
from agent_cli.tui.widgets.transcript import PRUNE_BATCH, PrunedMarker, Transcript
from agent_cli.tui.widgets.user_message import UserMessage


def test_history_skips_repeats_and_damaged_lines(tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text('{"text": "old"}\nnot json\n{"nope": 1}\n')
    history = InputHistory(path)
    assert history.entries == ["old"]
    history.add("new")
    history.add("new")
    history.add("   ")
    assert history.entries == ["old", "new"]
    assert [json.loads(line).get("text") for line in path.read_text().splitlines()[-1:]] == ["new"]
    assert history.previous("typing") == "new" and history.previous("x") == "old" and history.previous("x") is None
    assert history.next() == "new" and history.next() == "typing" and history.next() is None


def test_history_without_a_writable_home_still_works(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = InputHistory(blocker / "history.jsonl")  # parent is a file: cannot be created
    history.add("kept in memory")
    assert history.entries == ["kept in memory"]


def test_fuzzy_prefers_file_names_and_word_starts():
    paths = ["docs/helpers_guide.md", "src/helpers.py", "src/help.py", "tests/test_helpers.py", "hello/lp/x.txt"]
    assert fuzzy_filter("helpers.py", paths)[0] == "src/helpers.py"
    assert fuzzy_filter("thlp", paths)[0] == "tests/test_helpers.py"
    assert fuzzy_filter("zzz", paths) == []
    assert fuzzy_filter("", paths, limit=2) == paths[:2]


def test_list_files_walks_outside_git(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.py").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x").write_text("")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "dep.js").write_text("")
    (tmp_path / "top.md").write_text("")
    assert list_files(tmp_path) == ["top.md", "a/one.py"]


def test_formatting():
    assert tokens(999) == "999" and tokens(1234) == "1.2k" and tokens(182_400) == "182k" and tokens(2_500_000) == "2.5M"
    assert duration(0.42) == "0.4s" and duration(75) == "1m 15s"
    head, hidden, tail = preview_lines("\n".join(map(str, range(20))))
    assert head == ["0", "1", "2"] and hidden == 14 and tail == ["17", "18", "19"]
    assert preview_lines("a\nb") == (["a", "b"], 0, [])


class TranscriptApp(App):
    def compose(self):
        yield Transcript(max_cells=15, live_cells=3)


async def test_transcript_keeps_only_the_newest_cells():
    app = TranscriptApp()
    async with app.run_test() as pilot:
        transcript = app.query_one(Transcript)
        for index in range(15 + PRUNE_BATCH + 5):
            await transcript.add(UserMessage(f"message {index}"))
        await pilot.pause()
        # pruning waits for a batch, then drops back to the limit
        dropped = PRUNE_BATCH + 1
        kept = [f"message {i}" for i in range(dropped, 15 + PRUNE_BATCH + 5)]
        assert [cell.text for cell in transcript.cells] == kept
        marker = transcript.query_one(PrunedMarker)
        assert marker.count == dropped and transcript.children[0] is marker
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y  # anchored


async def test_old_answers_are_frozen_into_one_widget():
    app = TranscriptApp()
    async with app.run_test() as pilot:
        transcript = app.query_one(Transcript)
        first = await transcript.add(AssistantMessage("# Title\n\n- a\n- b\n\n```py\nx = 1\n```\n"))
        assert len(list(first.walk_children())) > 3
        for index in range(3):
            await transcript.add(UserMessage(f"later {index}"))
        await pilot.pause()
        frozen = transcript.cells[0]
        assert isinstance(frozen, FrozenAnswer) and not first.is_attached
        assert frozen.text.startswith("# Title") and not list(frozen.walk_children())
        assert "x = 1" in "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_long_answer_streams_in_segments_split_between_blocks():
    app = TranscriptApp()
    async with app.run_test() as pilot:
        transcript = app.query_one(Transcript)
        message = await transcript.add(AssistantMessage())
        paragraph = "A sentence that goes on for a while. " * 20 + "\n\n"
        text = "```python\n" + "x = 1\n" * 400 + "```\n\n" + paragraph * 30
        for start in range(0, len(text), 50):
            await message.write(text[start : start + 50])
            await pilot.pause(0)
        await message.finish(text)
        segments = [child.source for child in message.children]
        assert len(segments) > 1 and "".join(segments) == text == message.text
        assert all(closes_blocks(segment) for segment in segments[:-1])  # never inside the fence


def test_block_boundaries():
    assert closes_blocks("para\n\n") and not closes_blocks("para\n")
    assert not closes_blocks("```\ncode\n\n") and closes_blocks("```\ncode\n```\n\n")

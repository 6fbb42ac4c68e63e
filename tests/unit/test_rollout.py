"""Session files: what is written, when, and how torn, newer and corrupt files are read back."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime

import pytest

from agent_cli.context.history import ABORTED_OUTPUT
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput, assistant, user
from agent_cli.session.hooks import hook_context_text
from agent_cli.store.catalog import find_session, first_prompt, latest_session, list_sessions
from agent_cli.store.rollout import (
    FORMAT_VERSION,
    NewerFormatError,
    RecordingHistory,
    RolloutError,
    RolloutWriter,
    SessionBusyError,
    load_session_file,
    session_path,
)

ENV = "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"


def new_history(home, session_id="20250101T120000-abcd1234", cwd="/work/repo"):
    writer = RolloutWriter.for_new_session(home, session_id, cwd, "test-model", "openai-chat")
    return writer, RecordingHistory(writer)


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_path_layout_is_dated_folders_then_time_and_id(tmp_path):
    path = session_path(tmp_path, "ID", datetime(2025, 3, 7, 9, 5, 1))
    assert path == tmp_path / "sessions" / "2025" / "03" / "07" / "090501-ID.jsonl"


def test_nothing_is_written_until_the_first_item(tmp_path):
    writer, history = new_history(tmp_path)
    assert not writer.path.exists()
    history.record(user("hi"))
    assert writer.path.exists()
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o600  # transcripts may hold secrets


def test_context_waits_for_the_first_prompt_and_a_session_without_one_leaves_no_file(tmp_path):
    writer, history = new_history(tmp_path)
    context = [Message("developer", "<permissions>\nx\n</permissions>"), user(ENV)]
    history.extend(context)
    history.record(Message("developer", "the user switched the model"))  # /model before any prompt
    assert not writer.path.exists()
    history.record(user("fix it"))
    assert load_session_file(writer.path).items == (
        *context,
        Message("developer", "the user switched the model"),
        user("fix it"),
    )
    unused, unused_history = new_history(tmp_path, "20250101T120001-eeee5555")
    unused_history.extend(context)
    unused.close()
    assert not unused.path.exists()


def test_header_then_one_line_per_item_written_at_once(tmp_path):
    writer, history = new_history(tmp_path)
    items = [
        user("fix it"),
        Message("developer", "rules"),
        Reasoning("thinking", encrypted_content="opaque"),
        ToolCall("c1", "shell", '{"command": "ls"}'),
        ToolOutput("c1", "a.txt\n"),
        assistant("done ✓"),
    ]
    for count, item in enumerate(items, start=1):
        history.record(item)
        assert len(lines(writer.path)) == count + 1  # on disk before the next item exists
    header, *rest = lines(writer.path)
    assert header == {
        "type": "session",
        "format_version": FORMAT_VERSION,
        "id": "20250101T120000-abcd1234",
        "cwd": "/work/repo",
        "model": "test-model",
        "provider": "openai-chat",
        "created": header["created"],
        "agent_version": header["agent_version"],
    }
    assert [entry["type"] for entry in rest] == ["item"] * len(items)
    assert load_session_file(writer.path).items == tuple(items)


def test_extend_and_close_open_calls_are_recorded_too(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([user("a"), ToolCall("c1", "shell", "{}")])
    assert history.close_open_calls() == 1
    loaded = load_session_file(writer.path)
    assert loaded.items[-1] == ToolOutput("c1", ABORTED_OUTPUT, success=False)


def test_compaction_keeps_the_old_lines_and_replays_to_the_new_history(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([user("one"), assistant("two"), user("three")])
    history.replace([user("summary")])
    history.record(assistant("after"))
    records = lines(writer.path)
    assert [r["type"] for r in records] == ["session", "item", "item", "item", "compaction", "item"]
    assert records[1]["item"]["text"] == "one"  # nothing before the compaction was deleted
    assert load_session_file(writer.path).items == (user("summary"), assistant("after"))


def test_remove_oldest_is_replayed(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([ToolCall("c1", "shell", "{}"), ToolOutput("c1", "x"), user("keep")])
    history.remove_oldest()  # takes the call's output with it
    assert load_session_file(writer.path).items == (user("keep"),) == tuple(history.items)


def test_lone_surrogates_still_make_a_valid_line(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(ToolOutput("c1", "bad \udcff byte"))
    assert load_session_file(writer.path).items[0].output == "bad \udcff byte"


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([user("hi"), assistant("hello")])
    writer.close()
    with writer.path.open("ab") as handle:
        handle.write(b'{"type":"item","item":{"type":"mess')  # killed mid-write
    loaded = load_session_file(writer.path)
    assert loaded.items == (user("hi"), assistant("hello"))
    assert len(loaded.warnings) == 1 and "torn last line" in loaded.warnings[0]


def test_continuing_a_torn_file_cuts_the_fragment_so_new_lines_stay_valid(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("hi"))
    writer.close()
    with writer.path.open("ab") as handle:
        handle.write(b'{"type":"item","it')
    other, history2 = new_history(tmp_path, "20250101T130000-ffff0000")
    loaded = other.continue_file(writer.path)
    assert loaded.warnings
    history2.restore(loaded.items)
    history2.record(assistant("back"))
    other.close()
    again = load_session_file(writer.path)
    assert again.items == (user("hi"), assistant("back")) and again.warnings == ()


def test_a_last_line_without_newline_gets_one_before_new_lines(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("hi"))
    writer.close()
    writer.path.write_bytes(writer.path.read_bytes().rstrip(b"\n"))
    other = RolloutWriter.for_new_session(tmp_path, "x", "/", "m", "p")
    RecordingHistory(other)
    other.continue_file(writer.path)
    other.append_item(assistant("more"))
    other.close()
    assert load_session_file(writer.path).items == (user("hi"), assistant("more"))


def test_a_newer_format_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "s.jsonl"
    header = {
        "type": "session",
        "format_version": FORMAT_VERSION + 1,
        "id": "x",
        "cwd": "/",
        "model": "m",
        "provider": "p",
        "created": "2030-01-01T00:00:00+00:00",
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "future-thing"}) + "\n")
    with pytest.raises(NewerFormatError, match=r"newer agent-cli .*format 2.*Upgrade"):
        load_session_file(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b'{"type":"sess', "header was cut short"),
        (b"hello world\n", "not an agent session file"),
        (b'{"type":"item"}\n', "not an agent session file"),
        (b'{"type":"session","format_version":1}\n', "no valid 'id'"),
    ],
)
def test_files_that_are_not_sessions_give_clear_errors(tmp_path, content, message):
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(RolloutError, match=message):
        load_session_file(path)


def test_a_corrupt_line_in_the_middle_names_the_line(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([user("a"), user("b")])
    writer.close()
    data = writer.path.read_bytes().split(b"\n")
    data[1] = b"{garbage"
    writer.path.write_bytes(b"\n".join(data))
    with pytest.raises(RolloutError, match="line 2 is corrupt"):
        load_session_file(writer.path)


def test_a_malformed_item_names_the_line(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("a"))
    writer.close()
    with writer.path.open("a") as handle:
        handle.write(json.dumps({"type": "item", "item": {"type": "message", "role": "robot", "text": "x"}}) + "\n")
        handle.write(json.dumps({"type": "item", "item": {"type": "message", "role": "user", "text": "y"}}) + "\n")
    with pytest.raises(RolloutError, match="line 3 is malformed: unknown message role"):
        load_session_file(writer.path)


def test_unknown_line_types_of_the_same_version_are_skipped_with_a_warning(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("a"))
    writer.close()
    with writer.path.open("a") as handle:
        handle.write('{"type":"turn_context","model":"x"}\n')
    loaded = load_session_file(writer.path)
    assert loaded.items == (user("a"),)
    assert "unknown type 'turn_context'" in loaded.warnings[0]


def test_learned_lines_wait_for_the_file_stay_out_of_the_history_and_load_silently(tmp_path):
    writer, history = new_history(tmp_path)
    writer.append_learned("window", model="m", tokens=8192, source="server error (prompt too long)")
    assert not writer.path.exists()  # learning alone never creates a session file
    history.record(user("a"))
    writer.append_learned("calibration", model="m", ratio=2.5, reports=1)
    history.record(assistant("b"))
    writer.close()
    loaded = load_session_file(writer.path)
    assert loaded.items == (user("a"), assistant("b")) and loaded.warnings == ()
    assert [(line["what"], line["model"]) for line in loaded.learned] == [("window", "m"), ("calibration", "m")]


def test_a_file_in_use_cannot_be_continued_by_another_writer(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("a"))  # this writer holds the lock
    other = RolloutWriter.for_new_session(tmp_path, "y", "/", "m", "p")
    with pytest.raises(SessionBusyError, match="in use by another running agent"):
        other.continue_file(writer.path)
    writer.close()
    other.continue_file(writer.path)  # released


def test_a_write_failure_stops_saving_and_is_reported_once(tmp_path):
    blocker = tmp_path / "home"
    blocker.write_text("a file where the sessions folder should go")
    writer, history = new_history(blocker)
    history.record(user("a"))  # the history itself keeps working
    history.record(user("b"))
    assert len(history) == 2
    warning = writer.take_warning()
    assert warning and "no longer being saved" in warning
    assert writer.take_warning() is None


# --- listing and finding -----------------------------------------------------------------


def make_session(home, session_id, cwd, prompt, when, typed=None):
    writer = RolloutWriter.for_new_session(home, session_id, cwd, "m", "p")
    history = RecordingHistory(writer)
    history.extend([Message("developer", "<permissions>\nx\n</permissions>"), user(ENV)])
    history.record(user(hook_context_text("SessionStart", "context from a hook, not a prompt")))
    if prompt is not None:
        history.record(Message("user", prompt, typed=typed))
    else:  # as older versions left a session whose prompt never went out
        writer.path.parent.mkdir(parents=True, exist_ok=True)
        writer.path.write_text(json.dumps(writer.header.to_dict()) + "\n")
    writer.close()
    os.utime(writer.path, (when, when))
    return writer.path


def test_list_sessions_newest_first_with_first_real_prompt(tmp_path):
    old = make_session(tmp_path, "20250101T100000-aaaa1111", "/p/one", "first task", 1_000)
    new = make_session(tmp_path, "20250102T100000-bbbb2222", "/p/two", "second task", 2_000)
    empty = make_session(tmp_path, "20250103T100000-cccc3333", "/p/one", None, 1_500)
    (tmp_path / "sessions" / "junk.jsonl").write_text("not json\n")  # skipped, not fatal
    sessions = list_sessions(tmp_path)
    assert [s.path for s in sessions] == [new, empty, old]
    assert [s.first_prompt for s in sessions] == ["second task", None, "first task"]
    assert sessions[0].short_id == "bbbb2222" and sessions[0].size == new.stat().st_size
    assert [s.path for s in list_sessions(tmp_path, cwd="/p/one", limit=1)] == [empty]
    assert first_prompt(old) == "first task"


def test_a_session_is_listed_by_what_the_user_typed_not_what_it_expanded_to(tmp_path):
    path = make_session(
        tmp_path, "20250101T100000-aaaa1111", "/p", "You are reviewing a code change…", 1_000, typed="/review @app.py"
    )
    assert first_prompt(path) == "/review @app.py"
    assert load_session_file(path).items[-1].typed == "/review @app.py"


def test_compactions_are_counted_on_load(tmp_path):
    writer, history = new_history(tmp_path)
    history.extend([user("one"), assistant("two")])
    history.replace([user("first summary")])
    history.record(user("three"))
    history.replace([user("second summary")])
    assert load_session_file(writer.path).compactions == 2


def test_latest_prefers_this_directory_and_says_so(tmp_path):
    mine = make_session(tmp_path, "20250101T100000-aaaa1111", "/p/one", "x", 1_000)
    other = make_session(tmp_path, "20250102T100000-bbbb2222", "/p/two", "y", 2_000)
    assert latest_session(tmp_path, "/p/one") == (mine, True)
    assert latest_session(tmp_path, "/p/three") == (other, False)
    assert latest_session(tmp_path / "nowhere", "/p") is None


def test_find_session_by_id_prefix_random_part_or_path(tmp_path):
    a = make_session(tmp_path, "20250101T100000-aaaa1111", "/p", "x", 1_000)
    b = make_session(tmp_path, "20250101T110000-abcd2222", "/p", "y", 2_000)
    assert find_session(tmp_path, "aaaa") == a
    assert find_session(tmp_path, "20250101T110000-abcd2222") == b
    assert find_session(tmp_path, str(a)) == a
    with pytest.raises(RolloutError, match="matches 2 sessions"):
        find_session(tmp_path, "20250101")
    with pytest.raises(RolloutError, match="no saved session matches 'zzz'"):
        find_session(tmp_path, "zzz")


def test_a_network_decision_line_is_a_record_that_resuming_skips_quietly(tmp_path):
    writer, history = new_history(tmp_path)
    history.record(user("a"))
    writer.append_learned_like({"type": "network", "host": "pypi.org", "port": 443, "allowed": True, "by": "x"})
    history.record(assistant("b"))
    loaded = load_session_file(writer.path)
    assert loaded.items == (user("a"), assistant("b")) and loaded.warnings == ()

"""/rewind to prompt 2 of 4 in each mode, then carry on: files, conversation and the wire prefix."""

from __future__ import annotations

import json

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import Conversation
from agent_cli.context.fragments import is_real_user_message
from agent_cli.operations import Rewind
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.store.rollout import load_session_file
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

SETTINGS = ('approval_policy="never"', 'sandbox_mode="danger-full-access"')
PROMPTS = ["first prompt", "second prompt", "third prompt", "fourth prompt"]


async def four_turns(server, session):
    """Prompt k writes f{k}.txt; returns the index of each turn's first request."""
    firsts = []
    for number, prompt in enumerate(PROMPTS, start=1):
        server.script(
            Reply(tool_calls=[ToolCall("shell", {"command": f"echo {number} > f{number}.txt"})]),
            Reply(text=f"answer {number}"),
        )
        firsts.append(len(server.requests))
        events = await collect_events(session, prompt)
        assert any(isinstance(e, ev.CheckpointCreated) for e in events)
    return firsts


def prefix_before(request, prompt: str) -> bytes:
    """The request body's bytes up to where ``prompt`` (the last user message) starts."""
    raw = request.raw
    at = raw.rindex(json.dumps(prompt).encode()[:-1])
    return raw[:at]


@pytest.mark.parametrize("mode", ["both", "conversation", "code"])
async def test_rewind_to_prompt_two_then_continue(server, tmp_path, monkeypatch, mode):
    root = git_init(tmp_path / "work")
    kind = "plain" if mode == "conversation" else "git"
    if kind == "plain":
        root = tmp_path / "plain"
        root.mkdir()
    session = make_session(server, root, monkeypatch, *SETTINGS)
    firsts = await four_turns(server, session)
    await session.checkpoints._settle()
    listing = await collect_events(session, "/rewind")
    shown = next(e for e in listing if isinstance(e, ev.Notice)).text
    assert "2. second prompt" in shown and "1 file(s) +1 -0" in shown

    events = await collect_events(session, f"/rewind 2 {mode} --yes")
    rewound = next(e for e in events if isinstance(e, ev.Rewound))
    assert rewound.mode == mode
    files = sorted(p.name for p in root.glob("f*.txt"))
    if mode == "conversation":
        assert files == ["f1.txt", "f2.txt", "f3.txt", "f4.txt"] and rewound.restored == ()
    else:
        assert files == ["f1.txt"] and sorted(rewound.restored) == ["f2.txt", "f3.txt", "f4.txt"]
    assert rewound.prompt == (None if mode == "code" else "second prompt")

    server.script(Reply(text="again"))
    before = len(server.requests)
    await collect_events(session, "second prompt, edited")
    new, original = server.requests[before], server.requests[firsts[1]]
    if mode == "code":  # the conversation went on: all four turns, a note on the restored files
        text = new.raw.decode()
        assert all(prompt in text for prompt in PROMPTS) and "<files_restored>" in text
    else:
        assert prefix_before(new, "second prompt, edited") == prefix_before(original, "second prompt")
        messages = new.body["messages"]
        assert messages[:-1] == original.body["messages"][:-1]
        assert messages[-1]["content"] == "second prompt, edited"
    await session.aclose()

    # The file keeps the abandoned turns; replaying it gives the conversation as it is now.
    raw = session.rollout.path.read_text()
    assert all(prompt in raw for prompt in PROMPTS)
    loaded = load_session_file(session.rollout.path)
    kept = [item.text for item in loaded.items if is_real_user_message(item)]
    if mode == "code":
        assert kept == [*PROMPTS, "second prompt, edited"]
    else:
        assert kept == ["first prompt", "second prompt, edited"]


async def test_rewind_survives_resume_and_undo_skips_abandoned_turns(server, tmp_path, monkeypatch):
    root = git_init(tmp_path / "work")
    session = make_session(server, root, monkeypatch, *SETTINGS)
    await four_turns(server, session)
    await collect_events(session, "/rewind 3 conversation")
    await session.aclose()
    resumed = restore(open_session(session.config, interactive=False), session.rollout.path)
    entries = resumed.checkpoints.prompts()
    assert [entry.text for entry in entries] == ["first prompt", "second prompt"]
    assert [c.id for c in resumed.checkpoints.ledger.active()] == ["1", "2"]  # turns 3 and 4 were abandoned
    events = await collect_events(resumed, "/undo --yes")
    assert next(e for e in events if isinstance(e, ev.Rewound)).restored == ("f2.txt",)
    assert sorted(p.name for p in root.glob("f*.txt")) == ["f1.txt", "f3.txt", "f4.txt"]
    await resumed.aclose()


async def test_fork_copies_the_conversation_and_leaves_the_original(server, tmp_path, monkeypatch):
    root = git_init(tmp_path / "work")
    session = make_session(server, root, monkeypatch, *SETTINGS)
    await four_turns(server, session)
    original = session.rollout.path.read_bytes()
    events = await collect_events(session, "/fork 3")
    action = next(e for e in events if isinstance(e, ev.CommandAction))
    assert action.action == "resume"
    forked = load_session_file(action.argument)
    prompts = [item.text for item in forked.items if is_real_user_message(item)]
    assert prompts == ["first prompt", "second prompt"]
    assert forked.header.id != session.id
    assert session.rollout.path.read_bytes() == original
    await session.aclose()


async def test_agent_sessions_shows_the_abandoned_branch(server, tmp_path, monkeypatch, capsys):
    from agent_cli.headless.sessions_cmd import run_sessions

    root = git_init(tmp_path / "work")
    session = make_session(server, root, monkeypatch, *SETTINGS)
    await four_turns(server, session)
    await collect_events(session, "/rewind 2 conversation")
    server.script(Reply(text="again"))
    await collect_events(session, "second prompt, edited")
    await session.aclose()
    assert run_sessions([session.id]) == 0
    shown = capsys.readouterr().out.splitlines()[1:]
    assert shown == [
        "   1  first prompt",
        "   2  second prompt  [abandoned branch]",
        "   3  third prompt  [abandoned branch]",
        "   4  fourth prompt  [abandoned branch]",
        "      ↩ rewound: the conversation went back here",
        "   5  second prompt, edited",
    ]


async def test_a_rollback_of_the_last_turns_counts_prompts_from_the_end(server, tmp_path, monkeypatch):
    """``Rewind(-N, "conversation")`` is Codex's ``thread/rollback`` of N turns: before prompt 3 of 4."""
    session = make_session(server, git_init(tmp_path / "work"), monkeypatch, *SETTINGS)
    await four_turns(server, session)
    events = [event async for event in Conversation(session).submit(Rewind(-2, "conversation"))]
    rewound = next(e for e in events if isinstance(e, ev.Rewound))
    assert rewound.prompt == "third prompt" and (tmp_path / "work" / "f4.txt").exists()  # files stay
    assert [m.text for m in session.history.items if is_real_user_message(m)] == PROMPTS[:2]
    await session.aclose()

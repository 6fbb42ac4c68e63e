"""Whatever goes wrong inside a tool call becomes that tool's error output, and the turn goes on
(fault 3 of issue 16)."""

from __future__ import annotations

import pytest

from agent_cli import events as ev
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events

LONG_NAME = "x" * 300  # longer than any file system's name limit (255)


@pytest.fixture
def session(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    config = load_config(tmp_path, ['model_provider="openai-chat"', 'model="m"', 'sandbox_mode="workspace-write"'])
    return open_session(config, interactive=False)


def tool_outputs(events) -> list[str]:
    return [event.output for event in events if isinstance(event, ev.ToolCallEnd)]


@pytest.mark.parametrize(
    "patch",
    [
        f"*** Begin Patch\n*** Delete File: {LONG_NAME}\n*** End Patch",
        f"*** Begin Patch\n*** Add File: {LONG_NAME}/a.txt\n+hi\n*** End Patch",
        "*** Begin Patch\n*** Delete File: a\0b\n*** End Patch",
    ],
)
async def test_a_patch_the_file_system_refuses_is_the_tools_error(server, session, patch):
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="noted"))
    events = await collect_events(session, "patch it")
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "noted"
    [output] = tool_outputs(events)
    assert output.startswith("apply_patch") and ("too long" in output or "NUL" in output), output
    assert not [e for e in events if isinstance(e, ev.Error)]


@pytest.mark.parametrize(
    "path, words",
    [
        (LONG_NAME, "is too long: 300 bytes"),
        (f"{LONG_NAME}/deeper.txt", "is too long: 300 bytes"),
        ("notes\0.txt", "NUL byte"),
    ],
)
async def test_read_file_explains_a_bad_name_in_words(server, session, path, words):
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": path})]), Reply(text="ok"))
    events = await collect_events(session, "read it")
    [output] = tool_outputs(events)
    assert words in output and "OSError" not in output and "Errno" not in output, output
    assert isinstance(events[-1], ev.TurnComplete)


async def test_a_failure_outside_the_tools_own_code_is_its_error(server, session, monkeypatch):
    """Also outside the tool's own code (hooks, approval, sandbox set-up): the call fails, not the turn."""

    def broken(*args, **kwargs):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(session.approvals, "confinement", broken)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="went on"))
    events = await collect_events(session, "run it")
    [output] = tool_outputs(events)
    assert output == "shell failed: invalid argument"
    assert events[-1].last_message == "went on"

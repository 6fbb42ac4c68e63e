"""Operations, the session's API: typed lines read as operations, the route each takes, and what
applying one does, against an in-process scripted model (tests/scripted_model.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import config
from agent_cli import events as ev
from agent_cli.commands.conversation import Conversation
from agent_cli.commands.errors import InputError
from agent_cli.commands.typed_input import command_line, read_input
from agent_cli.hooks.spec import HookSpec
from agent_cli.items import Message, ToolCall
from agent_cli.models import base as stream
from agent_cli.models.base import Prompt
from agent_cli.operations import (
    APPROVAL_POLICIES,
    MODES,
    SANDBOX_MODES,
    AddHooks,
    ApproveForSession,
    Compact,
    Fork,
    Interrupt,
    Operation,
    Rewind,
    RunCommand,
    SetApprovalPolicy,
    SetMode,
    SetModel,
    SetSandbox,
    ShellCommand,
    Steer,
    UserInput,
    UserTurn,
)
from tests.scripted_model import ScriptedModel, scripted_session
from tests.waiting import until


@pytest.mark.parametrize(
    "typed, operation",
    [
        ("/mode plan", SetMode("plan")),
        ("/mode PLAN", SetMode("plan")),
        ("/mode chaos", RunCommand("mode", "chaos")),  # the command says what is wrong
        ("/mode", RunCommand("mode")),
        ("/model gpt-5", SetModel("gpt-5", verify=True)),
        ("/model", RunCommand("model")),
        ("/rewind 3 code --yes", Rewind(3, "code", confirmed=True)),
        ("/rewind 2", Rewind(2)),
        ("/rewind -1 conversation", Rewind(-1, "conversation")),
        ("/rewind 2 sideways", RunCommand("rewind", "2 sideways")),
        ("/compact keep the API notes", Compact("keep the API notes")),
        ("/compact", Compact()),
        ("/compact show", RunCommand("compact", "show")),
        ("/fork 2", Fork(2)),
        ("/fork", Fork()),
        ("/review --uncommitted", RunCommand("review", "--uncommitted")),
        ("/init", RunCommand("init")),
        ("!make test", ShellCommand("make test")),
        ("look at @notes.txt and !`date`", UserTurn("look at @notes.txt and !`date`")),
        ("/usr/bin/env is a path", UserTurn("/usr/bin/env is a path")),
    ],
)
def test_typed_lines_read_as_operations(typed: str, operation: Operation):
    assert read_input(typed) == operation


def test_images_go_with_a_prompt_and_never_with_a_command(tmp_path):
    picture = tmp_path / "a.png"
    assert read_input("what is this?", [picture]) == UserTurn("what is this?", (picture,))
    assert read_input("!ls", [picture]) == UserTurn("!ls", (picture,))  # a prompt with an image, not a command
    with pytest.raises(InputError, match="images can be attached to a prompt"):
        read_input("/status", [picture])


def test_the_memory_shortcut_is_read_only_where_the_front_end_offers_it():
    assert read_input("# the tests use pytest") == UserTurn("# the tests use pytest")
    shortcut = read_input("# the tests use pytest", memory_shortcut=True)
    assert shortcut == RunCommand("memory", "add --scope project the tests use pytest")


@pytest.mark.parametrize(
    "operation",
    [SetMode("ask"), SetModel("gpt-5", verify=True), Rewind(2, "conversation"), Rewind(1, "code", True)]
    + [Compact(), Compact("keep the plan"), Fork(), Fork(3), RunCommand("review", "--base main")]
    + [ShellCommand("git status"), UserTurn("hello")],
)
def test_an_operation_shown_as_typed_reads_back_as_itself(operation: Operation):
    assert read_input(command_line(operation)) == operation


def test_the_operations_name_the_configs_choices():
    assert set(MODES) == set(config.MODES)
    assert set(APPROVAL_POLICIES) == set(config.APPROVAL_POLICIES)
    assert set(SANDBOX_MODES) == set(config.SANDBOX_MODES)


# --- routes ------------------------------------------------------------------------------------


def test_each_operation_routes_as_it_changes_the_session(tmp_path):
    conversation = Conversation(scripted_session(tmp_path, ScriptedModel()))

    def when(op: Operation, busy: bool) -> str:
        return conversation.route(op, busy=busy).when

    for changes_history in (UserTurn("hi"), SetMode("plan"), SetModel("m"), Rewind(1), Compact(), Fork()):
        assert (when(changes_history, False), when(changes_history, True)) == ("now", "queue")
    for beside in (Interrupt(), SetApprovalPolicy("never"), SetSandbox("read-only"), AddHooks(())):
        assert (when(beside, False), when(beside, True)) == ("beside", "beside")
    assert (when(Steer("also"), False), when(Steer("also"), True)) == ("refused", "beside")
    assert when(RunCommand("status"), True) == "beside"  # it only reports
    assert when(RunCommand("compact", "show"), True) == "queue"
    assert conversation.route(RunCommand("resume"), busy=True) == conversation.route(UserInput("/resume"), busy=True)
    assert conversation.route(UserInput("/resume"), busy=True).when == "refused"
    assert conversation.route(UserInput("/mode plan"), busy=True) == conversation.route(SetMode("plan"), busy=True)


# --- applying ----------------------------------------------------------------------------------


async def events_of(conversation: Conversation, op: Operation) -> list[ev.Event]:
    return [event async for event in conversation.submit(op)]


async def test_a_typed_mode_switch_and_a_sent_one_do_the_same(tmp_path):
    for name in ("typed", "sent"):
        (tmp_path / name).mkdir()
    sessions = [scripted_session(tmp_path / name, ScriptedModel()) for name in ("typed", "sent")]
    typed = await events_of(Conversation(sessions[0]), UserInput("/mode plan"))
    sent = await events_of(Conversation(sessions[1]), SetMode("plan"))
    assert [type(e) for e in typed] == [type(e) for e in sent] and typed[-1] == sent[-1]
    assert all(session.mode == "plan" for session in sessions)
    assert [m.text for m in sessions[0].history.items if isinstance(m, Message) and m.role == "developer"] == [
        m.text for m in sessions[1].history.items if isinstance(m, Message) and m.role == "developer"
    ]
    for session in sessions:
        await session.aclose()


async def test_a_bad_operation_is_rejected_and_changes_nothing(tmp_path):
    session = scripted_session(tmp_path, ScriptedModel())
    conversation = Conversation(session)
    rejected = await events_of(conversation, SetMode("chaos"))  # type: ignore[arg-type] - what a host may send
    assert isinstance(rejected[-1], ev.InputRejected) and "unknown mode" in rejected[-1].message
    rejected = await events_of(conversation, ApproveForSession(rule="Bash(", command_prefix=("ls",)))
    assert isinstance(rejected[-1], ev.InputRejected) and "one thing" in rejected[-1].message
    assert session.mode == "agent" and not session.approvals.permissions.session_rules
    await session.aclose()


class HeldModel(ScriptedModel):
    """A scripted model whose first answer waits until the test lets it go."""

    def __init__(self, *script):
        super().__init__(*script)
        self.release = asyncio.Event()

    async def stream(self, prompt: Prompt) -> AsyncIterator[stream.StreamEvent]:
        if len(self.prompts) == 0:
            self.prompts.append(prompt)
            await self.release.wait()
            self.prompts.pop()
        async for event in super().stream(prompt):
            yield event


async def start(conversation: Conversation, op: Operation) -> tuple[asyncio.Task[None], list[ev.Event]]:
    seen: list[ev.Event] = []

    async def run() -> None:
        async for event in conversation.submit(op):
            seen.append(event)

    return asyncio.create_task(run()), seen


async def test_steered_input_reaches_the_running_turn_which_goes_on(tmp_path):
    model = HeldModel("Done with the first part.", "And the tests pass too.")
    session = scripted_session(tmp_path, model)
    conversation = Conversation(session)
    turn, seen = await start(conversation, UserTurn("fix the build"))
    await until(lambda: model.prompts, what="the first request")
    assert await events_of(conversation, Steer("also run the tests")) == []
    model.release.set()
    await turn
    assert len(model.prompts) == 2  # the answer without tool calls did not end the turn
    steered = model.prompts[1].items[-1]
    assert isinstance(steered, Message) and steered.role == "user" and steered.text == "also run the tests"
    assert ev.UserMessage("also run the tests") in seen
    assert [e for e in seen if isinstance(e, ev.TurnComplete)] == [ev.TurnComplete("And the tests pass too.")]
    refused = await events_of(conversation, Steer("too late"))
    assert isinstance(refused[-1], ev.InputRejected) and "no model turn is running" in refused[-1].message
    await session.aclose()


async def test_an_operation_that_changes_the_history_waits_for_the_running_turn(tmp_path):
    model = HeldModel("The answer.")
    session = scripted_session(tmp_path, model)
    conversation = Conversation(session)
    turn, _ = await start(conversation, UserTurn("a question"))
    await until(lambda: model.prompts, what="the first request")
    switch, switched = await start(conversation, SetMode("ask"))
    await asyncio.sleep(0)  # the switch had its chance to run: it waits
    assert session.mode == "agent" and not switched
    model.release.set()
    await asyncio.gather(turn, switch)
    assert session.mode == "ask" and isinstance(switched[-1], ev.Notice)
    roles = [item.role for item in session.history.items if isinstance(item, Message)]
    assert roles[-2:] == ["assistant", "developer"]  # the mode's note after the turn, never inside it
    await session.aclose()


async def test_a_command_prefix_approved_for_the_session_is_not_asked_again(tmp_path):
    touch = ToolCall("c1", "shell", json.dumps({"command": "touch made.txt"}))
    model = ScriptedModel(touch, "Made it.")
    session = scripted_session(tmp_path, model, 'approval_policy="untrusted"', interactive=True)
    conversation = Conversation(session)
    granted = await events_of(conversation, ApproveForSession(command_prefix=("touch",)))
    assert granted == [ev.Notice("allow for this session: Bash(touch:*)", title="permissions")]
    events = await events_of(conversation, UserTurn("make the file"))
    assert not [e for e in events if isinstance(e, ev.ApprovalRequest)]
    assert (tmp_path / "made.txt").exists()
    await session.aclose()


async def test_tools_granted_for_the_session_can_be_withdrawn(tmp_path):
    session = scripted_session(tmp_path, ScriptedModel(), interactive=True)
    conversation = Conversation(session)
    await events_of(conversation, ApproveForSession(tools=("apply_patch",)))
    assert "apply_patch" in session.approvals.session_approved
    await events_of(conversation, ApproveForSession(tools=("apply_patch",), withdraw=True))
    assert "apply_patch" not in session.approvals.session_approved
    await events_of(conversation, SetApprovalPolicy("never"))
    await events_of(conversation, SetSandbox("danger-full-access"))
    assert session.approvals.policy == "never" and not session.approvals.confined
    await session.aclose()


async def test_hooks_added_by_a_host_run_with_the_next_prompt(tmp_path):
    heard: list[dict] = []

    async def host_hook(payload: bytes) -> tuple[int, str, str]:
        heard.append(json.loads(payload))
        return 0, "", ""

    session = scripted_session(tmp_path, ScriptedModel("Hello."))
    conversation = Conversation(session)
    await events_of(conversation, AddHooks((HookSpec("UserPromptSubmit", "host callback", runner=host_hook),)))
    await events_of(conversation, UserTurn("hi there"))
    assert [payload["prompt"] for payload in heard] == ["hi there"]
    await session.aclose()


def test_no_session_is_needed_to_read_a_line(tmp_path: Path):
    """The parser is pure: a front end may show what a line will do before it is sent."""
    assert command_line(read_input("/rewind 1 both")) == "/rewind 1 both"


async def test_the_first_answer_to_an_approval_wins(tmp_path):
    """Two clients shown one approval: the first answer decides, the second changes nothing."""
    touch = ToolCall("c1", "shell", json.dumps({"command": "touch asked.txt"}))
    session = scripted_session(tmp_path, ScriptedModel(touch, "Done."), 'approval_policy="untrusted"', interactive=True)
    answers = []
    async for event in Conversation(session).submit(UserTurn("make the file")):
        if isinstance(event, ev.ApprovalRequest):
            answers += [event.answer(ev.ApprovalDecision("approve")), event.answer(ev.ApprovalDecision("deny"))]
    assert answers == [True, False]
    assert (tmp_path / "asked.txt").exists()
    await session.aclose()

"""Anthropic's Claude Agent SDK (PyPI `claude-agent-sdk`) drives `agent` in place of the `claude`
binary (``ClaudeAgentOptions(cli_path=...)``), over the fake model server on the Anthropic wire
and on the Responses wire: programs written for Claude Code run unchanged."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_session import DEMO, server_table
from tests.processes import gone, started

sdk = pytest.importorskip("claude_agent_sdk", reason="the Claude Agent SDK is not installed (the test extra has it)")
from claude_agent_sdk import (  # noqa: E402
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import PermissionRuleValue  # noqa: E402 - not exported by the package

pytestmark = pytest.mark.timeout(120)
WIRES = {"anthropic": "claude-sonnet-4-5", "responses": "gpt-5"}


@pytest.fixture(params=sorted(WIRES))
def wire(request) -> str:
    return request.param


@pytest.fixture
def agent_binary(tmp_path) -> Path:
    """What the SDK starts instead of `claude`: this checkout's agent under this Python."""
    path = tmp_path / "bin" / "agent"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_cli "$@"\n')
    path.chmod(0o755)
    return path


def options(server, wire: str, agent: Path, workdir: Path, **more) -> ClaudeAgentOptions:
    env = {
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "AGENT_HOME": str(workdir.parent / "agent-home"),
        **provider_env(server, "anthropic" if wire == "anthropic" else "openai"),
    }
    workdir.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=str(agent), model=WIRES[wire], cwd=str(workdir), env=env, **more)


async def collect(client: ClaudeSDKClient) -> list:
    return [message async for message in client.receive_response()]


def tool_results(messages: list) -> list[ToolResultBlock]:
    return [
        block
        for message in messages
        if isinstance(message, UserMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


def test_two_turns_on_one_client_with_a_shell_call(server, tmp_path, agent_binary, wire):
    server.script(
        Reply(text="Running it.", tool_calls=[ToolCall("shell", {"command": "echo from-the-shell"})]),
        lambda request: Reply(text="The command printed from-the-shell."),
        lambda request: Reply(text="Second turn."),
    )

    async def run():
        async with ClaudeSDKClient(options(server, wire, agent_binary, tmp_path / "work")) as client:
            await client.query("run echo")
            first = await collect(client)
            await client.query("and now?")
            second = await collect(client)
        return first, second

    first, second = asyncio.run(run())
    init = first[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init" and "Bash" in init.data["tools"]
    uses = [
        block
        for m in first
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, ToolUseBlock)
    ]
    assert [(use.name, use.input["command"]) for use in uses] == [("Bash", "echo from-the-shell")]
    (output,) = tool_results(first)
    assert "from-the-shell" in output.content and output.is_error is False
    ids = [m.message_id for m in first if isinstance(m, AssistantMessage)]  # text, tool_use | answer
    assert len(ids) == 3 and ids[0] == ids[1] != ids[2]  # one id per model response, as Anthropic's
    result = first[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and not result.is_error
    assert result.result == "The command printed from-the-shell."
    assert result.num_turns == 2 and result.usage["output_tokens"] > 0
    last = second[-1]
    assert isinstance(last, ResultMessage) and last.result == "Second turn."
    assert last.session_id == result.session_id == init.data["session_id"]  # one session
    assert "from-the-shell" in json.dumps(server.requests[-1].body)  # the second turn saw the first


def test_query_one_shot(server, tmp_path, agent_binary, wire):
    server.script(Reply(text="Hello from the model."))

    async def run():
        return [
            message
            async for message in query(prompt="Say hello", options=options(server, wire, agent_binary, tmp_path / "w"))
        ]

    messages = asyncio.run(run())
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Hello from the model."
    assert "Say hello" in json.dumps(server.requests[0].body)


def test_can_use_tool_denies_and_allows_with_updated_input(server, tmp_path, agent_binary, wire):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch denied.txt"})]),
        lambda request: Reply(tool_calls=[ToolCall("shell", {"command": "touch asked.txt"})]),
        lambda request: Reply(text="done"),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch other.txt"})]),
        lambda request: Reply(text="refused"),
    )
    asked: list[tuple[str, dict]] = []

    async def can_use_tool(name, tool_input, context):
        asked.append((name, dict(tool_input)))
        if "denied" in tool_input["command"]:
            return PermissionResultDeny(message="not that file")
        target = "forbidden.txt" if "other" in tool_input["command"] else "changed.txt"
        return PermissionResultAllow(updated_input={**tool_input, "command": f"touch {target}"})

    work = tmp_path / "work"
    rule = {"disallowed_tools": ["Bash(touch forbidden.txt)"]}  # holds for an updated input too

    async def run():
        opts = options(server, wire, agent_binary, work, can_use_tool=can_use_tool, **rule)
        async with ClaudeSDKClient(opts) as client:
            await client.query("touch files")
            first = await collect(client)
            await client.query("now the forbidden one")
            return first, await collect(client)

    messages, later = asyncio.run(run())
    assert [command["command"] for _, command in asked] == ["touch denied.txt", "touch asked.txt", "touch other.txt"]
    assert {name for name, _ in asked} == {"Bash"}
    denied, allowed = tool_results(messages)
    assert denied.is_error and "not that file" in denied.content
    assert not (work / "denied.txt").exists()
    assert (work / "changed.txt").exists() and not (work / "asked.txt").exists()  # the updated input ran
    result = messages[-1]
    assert result.result == "done" and [d["tool_use_id"] for d in result.permission_denials] == [denied.tool_use_id]
    (refused,) = tool_results(later)
    assert refused.is_error and "touch forbidden.txt" in refused.content
    assert not (work / "forbidden.txt").exists() and not (work / "other.txt").exists()


def test_pre_tool_use_hook_callback_blocks(server, tmp_path, agent_binary, wire):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch hooked.txt"})]),
        lambda request: Reply(text="blocked, fine"),
    )
    seen: list[dict] = []

    async def guard(hook_input, tool_use_id, context):
        seen.append(hook_input)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "the host says no",
            }
        }

    work = tmp_path / "work"
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]}

    async def run():
        async with ClaudeSDKClient(options(server, wire, agent_binary, work, hooks=hooks)) as client:
            await client.query("touch it")
            return await collect(client)

    messages = asyncio.run(run())
    assert seen and seen[0]["hook_event_name"] == "PreToolUse" and seen[0]["tool_name"] == "Bash"
    assert seen[0]["tool_input"]["command"] == "touch hooked.txt"
    (output,) = tool_results(messages)
    assert output.is_error and "the host says no" in output.content
    assert not (work / "hooked.txt").exists()
    assert messages[-1].result == "blocked, fine"


def test_permission_request_and_post_tool_use_failure_hook_callbacks(server, tmp_path, agent_binary):
    """The hook events added after the SDK front end (session/hook_events.py) reach the host's callbacks:
    PermissionRequest answers the approval, PostToolUseFailure hears the failure."""
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo boom; exit 3"})]), lambda request: Reply(text="it failed")
    )
    seen: dict[str, dict] = {}
    asked: list[str] = []

    async def record(hook_input, tool_use_id, context):
        seen[hook_input["hook_event_name"]] = hook_input
        if hook_input["hook_event_name"] == "PermissionRequest":
            return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
        return {}

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        return PermissionResultDeny(message="not outside the sandbox")

    work = tmp_path / "work"
    events = ("PermissionRequest", "PostToolUseFailure")
    hooks = {event: [HookMatcher(matcher="Bash", hooks=[record])] for event in events}

    async def run():
        opts = options(server, "responses", agent_binary, work, hooks=hooks, can_use_tool=can_use_tool)
        async with ClaudeSDKClient(opts) as client:
            await client.query("run it")
            return await collect(client)

    messages = asyncio.run(run())
    assert set(seen) == set(events), seen
    # the hook's yes ran it in the sandbox (the offer to re-run it outside after the failure is the host's)
    assert seen["PermissionRequest"]["tool_name"] == "Bash" and asked in ([], ["Bash"])
    assert seen["PermissionRequest"]["tool_input"]["command"] == "echo boom; exit 3"
    assert "boom" in seen["PostToolUseFailure"]["error"] and seen["PostToolUseFailure"]["is_interrupt"] is False
    assert messages[-1].result == "it failed"


def test_interrupt_mid_turn(server, tmp_path, agent_binary, wire):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 61.25"})]), Reply(text="after the interrupt"))

    async def run():
        async with ClaudeSDKClient(options(server, wire, agent_binary, tmp_path / "work")) as client:
            await client.query("sleep")
            messages, pid = [], None
            async for message in client.receive_response():
                messages.append(message)
                if any(isinstance(block, ToolUseBlock) for block in getattr(message, "content", []) or []):
                    pid = await started("sleep", "61.25")  # by its command line: it may run in a pid namespace
                    await client.interrupt()
            stopped = await gone(pid)
            await client.query("go on")
            after = await collect(client)
        return messages, stopped, after

    messages, stopped, after = asyncio.run(run())
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error and result.subtype == "error_during_execution"
    assert stopped  # the interrupted command was stopped
    assert after[-1].result == "after the interrupt"  # the session goes on


def test_max_turns_gives_error_max_turns(server, tmp_path, agent_binary, wire):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo one"})]))

    async def run():
        async with ClaudeSDKClient(options(server, wire, agent_binary, tmp_path / "w", max_turns=1)) as client:
            await client.query("loop")
            return await collect(client)

    result = asyncio.run(run())[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_turns" and result.is_error
    assert len(server.requests) == 1


def test_resume_by_session_id_in_a_new_process(server, tmp_path, agent_binary, wire):
    server.script(Reply(text="First answer."), lambda request: Reply(text="Resumed."))
    work = tmp_path / "work"

    async def run(prompt: str, **more):
        opts = options(server, wire, agent_binary, work, **more)
        return [message async for message in query(prompt=prompt, options=opts)]

    chosen = "5f0c6a8e-3d2b-4c1a-9e7f-0123456789ab"  # the SDK's session_id: the new session takes it
    first = asyncio.run(run("remember the word pelican", session_id=chosen))[-1]
    assert first.session_id == chosen
    second = asyncio.run(run("what was the word?", resume=chosen))[-1]
    assert second.result == "Resumed." and second.session_id == chosen
    assert "pelican" in json.dumps(server.requests[-1].body)


def test_sdk_mcp_server_tool_called_by_the_model(server, tmp_path, agent_binary, wire):
    calls: list[dict] = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    calculator = create_sdk_mcp_server("calc", tools=[add])
    server.script(
        Reply(tool_calls=[ToolCall("mcp__calc__add", {"a": 2, "b": 3})]), lambda request: Reply(text="The sum is 5.")
    )

    async def run():
        opts = options(server, wire, agent_binary, tmp_path / "w", mcp_servers={"calc": calculator})
        async with ClaudeSDKClient(opts) as client:
            await client.query("add 2 and 3")
            messages = await collect(client)
            status = await client.get_mcp_status()
        return messages, status

    messages, status = asyncio.run(run())
    assert calls == [{"a": 2, "b": 3}]
    (output,) = tool_results(messages)
    assert "sum=5" in str(output.content)
    assert "mcp__calc__add" in json.dumps(server.requests[0].body)  # the model was offered the host's tool
    assert status["mcpServers"][0]["name"] == "calc" and status["mcpServers"][0]["status"] == "connected"
    assert messages[-1].result == "The sum is 5."


def test_an_always_allow_from_can_use_tool_holds_for_the_session(server, tmp_path, agent_binary):
    """`updatedPermissions` with an allow rule (the host's "always allow"): the next matching
    call is not asked about."""
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch one.txt"})]),
        lambda request: Reply(tool_calls=[ToolCall("shell", {"command": "touch two.txt"})]),
        lambda request: Reply(text="done"),
    )
    asked: list[str] = []

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["command"])
        always = PermissionUpdate(
            type="addRules", rules=[PermissionRuleValue(tool_name="Bash", rule_content="touch:*")], behavior="allow"
        )
        return PermissionResultAllow(updated_permissions=[always])

    work = tmp_path / "work"

    async def run():
        async with ClaudeSDKClient(
            options(server, "responses", agent_binary, work, can_use_tool=can_use_tool)
        ) as client:
            await client.query("touch two files")
            return await collect(client)

    messages = asyncio.run(run())
    assert asked == ["touch one.txt"]
    assert (work / "one.txt").exists() and (work / "two.txt").exists()
    assert messages[-1].result == "done"


def test_an_approval_that_switches_to_plan_mode_applies_after_its_turn(server, tmp_path, agent_binary):
    """`updatedPermissions` with setMode plan, answered mid-turn: the turn goes on (it never waits
    for itself) and the next turn runs in plan mode, told so by a note."""
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch one.txt"})]),
        lambda request: Reply(text="done"),
        lambda request: Reply(text="a plan"),
    )

    async def can_use_tool(name, tool_input, context):
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(type="setMode", mode="plan")])

    work = tmp_path / "work"

    async def run():
        async with ClaudeSDKClient(
            options(server, "responses", agent_binary, work, can_use_tool=can_use_tool)
        ) as client:
            await client.query("touch a file")
            first = await collect(client)
            await client.query("now plan the rest")
            return first, await collect(client)

    first, second = asyncio.run(run())
    assert first[-1].result == "done" and second[-1].result == "a plan"
    assert (work / "one.txt").exists()
    tools = {tool.get("name") for tool in server.requests[-1].body.get("tools", [])}
    assert "update_plan" in tools and not {"shell", "apply_patch"} & tools
    assert "switched to plan mode" in json.dumps(server.requests[-1].body)


def test_agents_defined_by_the_host_run_as_subagents(server, tmp_path, agent_binary):
    """`agents=` (sent in `initialize`): the model is offered them and one runs with its own prompt
    and tools."""
    server.script(
        Reply(tool_calls=[ToolCall("task", {"agent": "reviewer", "description": "review", "prompt": "review it"})]),
        Reply(text="REVIEWED"),  # the subagent's answer
        lambda request: Reply(text="done"),
    )
    reviewer = AgentDefinition(description="Reviews code for bugs", prompt="You review code.", tools=["Read", "Grep"])

    async def run():
        opts = options(server, "responses", agent_binary, tmp_path / "w", agents={"reviewer": reviewer})
        async with ClaudeSDKClient(opts) as client:
            await client.query("have it reviewed")
            return await collect(client)

    messages = asyncio.run(run())
    offered, child = server.requests[0].body, server.requests[1].body
    assert "reviewer: Reviews code for bugs" in json.dumps(offered["tools"])
    assert "You review code." in json.dumps(child)
    assert sorted(tool["name"] for tool in child["tools"]) == ["grep", "read_file"]
    assert "REVIEWED" in str(tool_results(messages)[0].content) and messages[-1].result == "done"


def test_strict_mcp_config_runs_only_the_hosts_servers(server, tmp_path, agent_binary):
    """`--strict-mcp-config` (the SDK's `extra_args`): a server of agent-cli's own config stays off."""
    home = tmp_path / "agent-home"
    home.mkdir()
    (home / "config.toml").write_text(server_table("demo", DEMO))
    calculator = create_sdk_mcp_server("calc", tools=[])

    async def status(**more) -> list[str]:
        opts = options(server, "responses", agent_binary, tmp_path / "w", mcp_servers={"calc": calculator}, **more)
        async with ClaudeSDKClient(opts) as client:
            return sorted(entry["name"] for entry in (await client.get_mcp_status())["mcpServers"])

    assert asyncio.run(status()) == ["calc", "demo"]
    assert asyncio.run(status(extra_args={"strict-mcp-config": None})) == ["calc"]


def test_print_mode_text_and_json(server, tmp_path, wire):
    """`claude -p` as scripts call it: the answer as text, or the result as one JSON object."""
    server.script(Reply(text="plain answer"), Reply(text="json answer"))
    env = provider_env(server, "anthropic" if wire == "anthropic" else "openai")
    text = run_agent(["-p", "hi", "--model", WIRES[wire]], cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout == "plain answer\n"
    as_json = run_agent(["-p", "--output-format", "json", "--model", WIRES[wire]], cwd=tmp_path, env=env, stdin="hi")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["type"] == "result" and result["subtype"] == "success" and result["result"] == "json answer"


def test_control_requests_answered_or_refused(server, tmp_path, agent_binary):
    """What we do is answered; what we do not (stop_task, mcp_toggle) is an error, never a hang."""

    async def run():
        async with ClaudeSDKClient(options(server, "anthropic", agent_binary, tmp_path / "w")) as client:
            info = await client.get_server_info()
            await client.set_permission_mode("acceptEdits")
            await client.set_model("claude-haiku-4-5")
            usage = await client.get_context_usage()
            with pytest.raises(Exception, match="does not support"):
                await client.stop_task("a-task")
            with pytest.raises(Exception, match="does not support"):
                await client.toggle_mcp_server("a-server", False)
            return info, usage

    info, usage = asyncio.run(run())
    assert info["pid"] > 0 and any(command["name"] == "compact" for command in info["commands"])
    assert usage["totalTokens"] > 0 and usage["model"] == "claude-haiku-4-5"


def test_json_schema_fills_structured_output(server, tmp_path, agent_binary):
    server.script(Reply(text='{"answer": 4}'))
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}

    async def run():
        opts = options(
            server, "responses", agent_binary, tmp_path / "w", output_format={"type": "json_schema", "schema": schema}
        )
        return [message async for message in query(prompt="2+2?", options=opts)]

    result = asyncio.run(run())[-1]
    assert result.structured_output == {"answer": 4}


def test_rewind_files_to_a_user_message(server, tmp_path, agent_binary):
    """`rewind_files(uuid)` of a replayed user message takes the files back with our checkpoints."""
    work = git_init(tmp_path / "work")
    (work / "notes.txt").write_text("original\n")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo changed > notes.txt"})]),
        lambda request: Reply(text="changed it"),
    )

    async def run():
        opts = options(server, "anthropic", agent_binary, work, extra_args={"replay-user-messages": None})
        async with ClaudeSDKClient(opts) as client:
            await client.query("change the notes")
            messages = await collect(client)
            replayed = [m for m in messages if isinstance(m, UserMessage) and not tool_results([m])]
            changed = (work / "notes.txt").read_text()
            await client.rewind_files(replayed[0].uuid)
            with pytest.raises(Exception, match="no checkpoint"):
                await client.rewind_files("not-a-message-of-this-session")
        return changed

    assert asyncio.run(run()) == "changed\n"
    assert (work / "notes.txt").read_text() == "original\n"


def test_allowed_and_disallowed_tools_are_permission_rules(server, tmp_path, agent_binary):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch allowed.txt"})]),
        lambda request: Reply(tool_calls=[ToolCall("shell", {"command": "touch denied.txt"})]),
        lambda request: Reply(text="done"),
    )
    asked: list[str] = []

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input.get("command", ""))
        return PermissionResultAllow()

    work = tmp_path / "work"
    rules = {"allowed_tools": ["Bash(touch allowed.txt)"], "disallowed_tools": ["Bash(touch denied.txt)"]}

    async def run():
        opts = options(
            server, "anthropic", agent_binary, work, can_use_tool=can_use_tool, tools=["Bash", "Read"], **rules
        )
        async with ClaudeSDKClient(opts) as client:
            await client.query("touch both")
            return await collect(client)

    messages = asyncio.run(run())
    assert asked == []  # the allow rule answered; the deny rule refused without asking
    assert (work / "allowed.txt").exists() and not (work / "denied.txt").exists()
    allowed, denied = tool_results(messages)
    assert not allowed.is_error and denied.is_error and "touch denied.txt" in denied.content
    assert set(messages[0].data["tools"]) == {"Bash", "Read"}  # --tools: the model got these
    assert {tool["name"] for tool in server.requests[0].body["tools"]} == {"shell", "read_file"}


def test_partial_messages_stream_text_deltas(server, tmp_path, agent_binary, wire):
    server.script(Reply(text="streamed in pieces", chunk_size=4))

    async def run():
        opts = options(server, wire, agent_binary, tmp_path / "w", include_partial_messages=True)
        async with ClaudeSDKClient(opts) as client:
            await client.query("stream")
            return await collect(client)

    messages = asyncio.run(run())
    events = [message.event for message in messages if isinstance(message, StreamEvent)]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "message_start" and kinds[1] == "content_block_start" and kinds[-1] == "message_stop"
    deltas = [event["delta"]["text"] for event in events if event["type"] == "content_block_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "streamed in pieces"
    assert messages[-1].result == "streamed in pieces"


def test_disconnect_mid_turn_ends_agent_and_its_command(server, tmp_path, agent_binary):
    """The SDK closes stdin, then terminates the CLI: the agent and the command it runs end."""
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 61.75"})]))

    async def run():
        client = ClaudeSDKClient(options(server, "anthropic", agent_binary, tmp_path / "w"))
        await client.connect()
        try:
            await client.query("sleep")
            async for message in client.receive_messages():
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    agent_pid = message.data["pid"]
                if isinstance(message, AssistantMessage) and isinstance(message.content[0], ToolUseBlock):
                    sleeper = await started("sleep", "61.75")
                    break
        finally:
            await client.disconnect()
        return await gone(agent_pid, within=10), await gone(sleeper, within=10)

    assert asyncio.run(run()) == (True, True)


def test_subagent_messages_name_their_task_call(server, tmp_path, agent_binary):
    server.script(
        Reply(tool_calls=[ToolCall("task", {"agent": "explore", "description": "look", "prompt": "find x"})]),
        Reply(text="x is in main.py"),  # the subagent's answer
        Reply(text="The subagent found it."),
    )

    async def run():
        async with ClaudeSDKClient(options(server, "anthropic", agent_binary, tmp_path / "w")) as client:
            await client.query("delegate")
            return await collect(client)

    messages = asyncio.run(run())
    (task,) = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolUseBlock)]
    assert task.name == "Task" and task.input["subagent_type"] == "explore"
    child = [m for m in messages if isinstance(m, AssistantMessage) and m.parent_tool_use_id == task.id]
    assert [block.text for m in child for block in m.content] == ["x is in main.py"]
    assert messages[-1].result == "The subagent found it."


@pytest.mark.parametrize("sources", [[], ["user"], None])
def test_setting_sources_choose_which_claude_settings_load(server, tmp_path, agent_binary, sources):
    """`setting_sources=[]` sends `--setting-sources=`: the user's ~/.claude/settings.json hooks do
    not run; with ["user"], or no flag at all (claude's default: every file), they do (here a
    PreToolUse hook that blocks the call)."""
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(exist_ok=True)
    blocker = {"hooks": [{"type": "command", "command": "echo blocked by the user settings >&2; exit 2"}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [blocker]}}))
    workdir = tmp_path / "work"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch ran.txt"})]), lambda request: Reply(text="done")
    )

    async def run():
        async with ClaudeSDKClient(
            options(
                server, "anthropic", agent_binary, workdir, setting_sources=sources, permission_mode="bypassPermissions"
            )
        ) as client:
            await client.query("touch it")
            return await collect(client)

    messages = asyncio.run(run())
    assert isinstance(messages[-1], ResultMessage)
    assert (workdir / "ran.txt").exists() == (sources == [])


def test_plan_mode_is_left_only_as_the_host_says(server, tmp_path, agent_binary):
    """Issue 45: a host started the session in plan mode; a user message `/mode agent` switched it
    and the next shell call wrote a file while every system/init still said plan. Now the message
    is refused with the reason, the call is refused by the mode, and system/init says the mode in
    force; the host's own set_permission_mode is what leaves plan mode."""
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch planned.txt"})]),
        lambda request: Reply(text="still planning"),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch built.txt"})]),
        lambda request: Reply(text="built"),
    )
    work = tmp_path / "work"

    async def run():
        opts = options(server, "responses", agent_binary, work, permission_mode="plan")
        async with ClaudeSDKClient(opts) as client:
            await client.query("/mode agent")
            switched = await collect(client)
            await client.query("make the file")
            planning = await collect(client)
            await client.set_permission_mode("default")
            await client.query("now build it")
            return switched, planning, await collect(client)

    switched, planning, building = asyncio.run(run())

    def init_mode(messages: list) -> str:
        (init,) = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"]
        return init.data["permissionMode"]

    refused = switched[-1]
    assert refused.is_error and "set_permission_mode" in refused.result
    assert init_mode(switched) == "plan" and init_mode(planning) == "plan"
    assert not (work / "planned.txt").exists()
    (denied,) = tool_results(planning)
    assert denied.is_error
    assert init_mode(building) == "default" and (work / "built.txt").exists()

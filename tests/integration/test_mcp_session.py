"""MCP servers in a real session: the demo server (tests/mcp_servers) as a subprocess over stdio
and over streamable HTTP on 127.0.0.1, driven by the fake model server and the real SDKs."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace

import pytest

from agent_cli import events as ev
from agent_cli.config import load_config
from agent_cli.items import ToolOutput
from agent_cli.runtime import open_session
from agent_cli.session import Session
from tests.conftest import REPO
from tests.fake_server import Reply, ToolCall
from tests.mcp_servers.http import serve_http
from tests.plugin_fixtures import write_plugin
from tests.processes import alive
from tests.session_helpers import collect_events

DEMO = [sys.executable, "-m", "tests.mcp_servers.demo_server"]


def server_table(name: str, command: list[str], **settings) -> str:
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {json.dumps(command[0])}",
        f"args = {json.dumps(command[1:])}",
        f"cwd = {json.dumps(str(REPO))}",
        "startup_timeout_sec = 60",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def make_session(server, tmp_path, monkeypatch, isolated_home):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    sessions = []

    def make(config_text: str, *overrides: str) -> Session:
        (isolated_home / "config.toml").write_text(config_text)
        config = load_config(tmp_path, ['model_provider="openai-chat"', 'model="m"', *overrides])
        config = replace(
            config, trust_repository=True
        )  # the folder's .mcp.json and plugins run (trust has tests of its own)
        session = open_session(config, interactive=False)
        sessions.append(session)
        return session

    yield make


def tool_names(request) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def tool_outputs(request) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.body["messages"] if m["role"] == "tool"}


async def test_stdio_server_tools_results_timeout_crash_restart_and_list_changed(server, make_session):
    session = make_session(server_table("demo", DEMO, tool_timeout_sec=3), "model_supports_images=true")
    server.script(
        Reply(
            tool_calls=[
                ToolCall("mcp__demo__echo", {"text": "hi"}, "c1"),
                ToolCall("mcp__demo__add", {"a": 2, "b": 3}, "c2"),
                ToolCall("mcp__demo__pixel", {}, "c3"),
                ToolCall("mcp__demo__fail", {"reason": "no"}, "c4"),
                ToolCall("mcp__demo__slow", {"seconds": 30}, "c5"),
                ToolCall("mcp__demo__pid", {}, "c6"),
            ]
        ),
        Reply(tool_calls=[ToolCall("mcp__demo__crash", {}, "c8")]),
        Reply(tool_calls=[ToolCall("mcp__demo__pid", {}, "c9"), ToolCall("mcp__demo__grow", {}, "c10")]),
        Reply(text="done"),
        Reply(text="second turn"),
    )
    events = await collect_events(session, "use the demo server")
    assert isinstance(events[-1], ev.TurnComplete), events[-1]
    first = server.requests[0]
    assert {"mcp__demo__echo", "mcp__demo__add", "mcp__demo__pixel"} <= set(tool_names(first))
    echo = next(t["function"] for t in first.body["tools"] if t["function"]["name"] == "mcp__demo__echo")
    assert echo["description"] == "Echo the text back." and echo["parameters"]["required"] == ["text"]

    outputs = tool_outputs(server.requests[1])
    assert outputs["c1"] == "echo: hi"
    assert json.loads(outputs["c2"]) == {"sum": 5}  # structured content as JSON when there is no text
    assert outputs["c3"] == "[image: pixel image 1, 1 x 1]"  # the image itself follows the tool messages
    images = [
        part
        for m in server.requests[1].body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == "image_url"
    ]
    assert [part["image_url"]["url"][:22] for part in images] == ["data:image/png;base64,"]
    assert (
        "c4" in outputs and not next(e for e in events if isinstance(e, ev.ToolCallEnd) and e.call_id == "c4").success
    )
    assert "did not finish within 3 s" in outputs["c5"]
    first_pid = int(outputs["c6"])

    crash = tool_outputs(server.requests[2])["c8"]
    assert "exited during the call" in crash and "crashing on purpose" in crash  # its stderr, in one line
    assert not alive(first_pid)
    second_pid = int(tool_outputs(server.requests[3])["c9"])  # restarted once, on the next call
    assert second_pid != first_pid and alive(second_pid)

    # the tool `grow` added is offered from the next turn on, never in the middle of this one
    assert all("mcp__demo__grown" not in tool_names(request) for request in server.requests[:4])
    await collect_events(session, "again")
    assert "mcp__demo__grown" in tool_names(server.requests[4])
    # the model is told, in a new item after the turn's message: the earlier messages stay as they were
    earlier, later = server.requests[3].body["messages"], server.requests[4].body["messages"]
    assert later[: len(earlier)] == earlier
    note = later[-1]
    assert later[-2]["content"] == "again" and "Added: mcp__demo__grown" in note["content"], later[-2:]
    await session.aclose()
    assert not alive(second_pid)
    server.assert_done()


async def test_search_mode_prompts_and_resources_with_150_tools(server, make_session):
    plain = make_session("")
    await run_and_close(plain, server)  # the fixed overhead without any MCP server
    baseline = tool_names(server.requests[0])
    session = make_session(server_table("demo", [*DEMO, "--tools", "150"]))
    server.script(
        Reply(tool_calls=[ToolCall("mcp_search", {"query": "widget_42 records"}, "s1")]),
        Reply(
            tool_calls=[
                ToolCall("mcp_call", {"server": "demo", "tool": "gen_42", "arguments": {"query": "q"}}, "s2"),
                ToolCall("mcp_call", {"server": "demo", "tool": "nope"}, "s3"),
            ]
        ),
        Reply(text="found it"),
    )
    await collect_events(session, "find the widget tool")
    requests = server.requests[1:]
    found = tool_outputs(requests[1])["s1"]
    assert "tool: gen_42" in found and '"query"' in found  # with its full input schema
    outputs = tool_outputs(requests[2])
    assert outputs["s2"] == "generated tool 42 got 'q'"
    assert "no MCP tool 'nope'" in outputs["s3"]
    for request in requests:
        assert tool_names(request) == [*baseline, "mcp_search", "mcp_call"]  # 150 tools, two fixed entries

    usage = next(e for e in await collect_events(session, "/context") if isinstance(e, ev.ContextUsage))
    assert 0 < {part.name: part.tokens for part in usage.parts}["MCP tools"] < 400

    server.script(Reply(text="reviewed"))
    await collect_events(session, "/mcp__demo__review app.py focus=style")
    assert server.requests[-1].body["messages"][-1]["content"] == "Please review app.py, focusing on style."
    help_text = next(e for e in await collect_events(session, "/help") if isinstance(e, ev.Notice)).text
    assert "/mcp__demo__review <path> [focus]" in help_text  # listed with the custom commands
    rejected = await collect_events(session, "/mcp__demo__review")
    assert (
        isinstance(rejected[-1], ev.InputRejected)
        and "usage: /mcp__demo__review <path> [focus]" in rejected[-1].message
    )

    server.script(Reply(text="noted"))
    await collect_events(session, "summarize @demo:demo://notes and @demo:demo://logo")
    sent = server.requests[-1].body["messages"][-1]["content"]
    assert "version 2 adds widgets" in sent and "[binary resource: image/png, 70 bytes" in sent
    notice = next(e for e in await collect_events(session, "/mcp") if isinstance(e, ev.Notice))
    assert (
        "demo" in notice.text
        and "ready" in notice.text
        and "158 tools" in notice.text
        and "1 prompt ·" in notice.text
        and "Search mode" in notice.text
    )
    await session.aclose()


async def run_and_close(session: Session, server) -> None:
    server.script(Reply(text="ok"))
    await collect_events(session, "hi")
    await session.aclose()


async def test_servers_that_fail_or_never_start_are_one_warning_each(server, make_session, tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    config = (
        server_table("broken", ["sh", "-c", "echo 'boom: missing token' >&2; exit 1"])
        + server_table("sleeper", ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"]).replace(
            "startup_timeout_sec = 60", "startup_timeout_sec = 1"
        )
        + server_table("off", DEMO, enabled=False)
    )
    session = make_session(config)
    server.script(Reply(text="still works"))
    events = await collect_events(session, "hello")
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "still works"
    warnings = [e.message for e in events if isinstance(e, ev.Warning) and "MCP server" in e.message]
    broken = next(w for w in warnings if "'broken'" in w)
    assert "boom: missing token" in broken
    assert any("'sleeper'" in w and "did not start within 1 s" in w for w in warnings)
    assert len(warnings) == 2
    assert not any(name.startswith("mcp__") for name in tool_names(server.requests[0]))
    states = {state.name: state.status for state in session.mcp.manager.states()}
    assert states == {"broken": "failed", "sleeper": "failed", "off": "disabled"}
    await session.aclose()
    assert not alive(int(pid_file.read_text()))


async def test_streamable_http_server(server, make_session):
    with serve_http() as url:
        session = make_session(f'[mcp_servers.web]\nurl = "{url}"\nstartup_timeout_sec = 60\n')
        server.script(Reply(tool_calls=[ToolCall("mcp__web__echo", {"text": "over http"}, "h1")]), Reply(text="ok"))
        await collect_events(session, "call it")
        assert tool_outputs(server.requests[1])["h1"] == "echo: over http"
        assert session.mcp.manager.states()[0].transport == "http"
        await session.aclose()


async def test_a_plugins_server_follows_modes_approvals_and_hooks(server, make_session, tmp_path):
    serve = f"import runpy, sys; sys.path.insert(0, {str(REPO)!r}); runpy.run_module('tests.mcp_servers.demo_server', run_name='__main__')"
    write_plugin(
        tmp_path / ".agent" / "plugins",
        "kit",
        {
            "serve.py": serve,
            ".mcp.json": {
                "mcpServers": {"demo": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/serve.py"]}}
            },
        },
    )
    hook = f'[[hooks.PreToolUse]]\nmatcher = "mcp__demo__pid"\ncommand = "cat > {tmp_path}/hook.json; echo no pids here >&2; exit 2"\n'
    config = "[mcp_servers.demo]\nstartup_timeout_sec = 60\n" + hook  # a config table adjusts the plugin's server
    session = make_session(config, 'mode="ask"', 'approval_policy="untrusted"')
    assert session.mcp.manager.states()[0].scope == "plugin kit"
    server.script(
        Reply(
            tool_calls=[
                ToolCall("mcp__demo__echo", {"text": "read"}, "r1"),
                ToolCall("mcp__demo__add", {"a": 1, "b": 1}, "w1"),
            ]
        ),
        Reply(text="ok"),
    )
    await collect_events(session, "try both")
    names = tool_names(server.requests[0])
    assert "mcp__demo__echo" in names and "mcp__demo__add" not in names  # ask mode: read-only tools only
    outputs = tool_outputs(server.requests[1])
    assert outputs["r1"] == "echo: read" and "not available in ask mode" in outputs["w1"]
    session.switch_mode("agent")
    server.script(
        Reply(tool_calls=[ToolCall("mcp__demo__add", {"a": 1, "b": 1}, "w2"), ToolCall("mcp__demo__pid", {}, "p1")]),
        Reply(text="ok"),
    )
    await collect_events(session, "write")
    outputs = tool_outputs(server.requests[3])
    assert "cannot ask the user" in outputs["w2"]  # untrusted asks before MCP writes
    assert "no pids here" in outputs["p1"]  # a PreToolUse hook blocked it, seeing the mcp__ name and arguments
    assert json.loads((tmp_path / "hook.json").read_text())["tool_name"] == "mcp__demo__pid"
    assert not any(isinstance(item, ToolOutput) and item.output == '{\n "sum": 2\n}' for item in session.history.items)
    await session.aclose()


async def test_a_url_that_only_speaks_sse_falls_back_to_it(server, make_session):
    with serve_http("sse") as url:
        session = make_session(f'[mcp_servers.old]\nurl = "{url}"\nstartup_timeout_sec = 60\n')
        server.script(Reply(tool_calls=[ToolCall("mcp__old__echo", {"text": "sse"}, "e1")]), Reply(text="ok"))
        await collect_events(session, "call it")
        assert tool_outputs(server.requests[1])["e1"] == "echo: sse"
        await session.aclose()


async def test_mcp_before_the_first_turn_shows_what_the_tools_will_cost_and_status_sums_up(
    server, make_session, tmp_path
):
    write_plugin(tmp_path / ".agent" / "plugins", "kit", {})
    session = make_session(server_table("demo", DEMO) + server_table("ghost", ["/nonexistent/server"]))
    notice = next(e for e in await collect_events(session, "/mcp") if isinstance(e, ev.Notice))
    costs = re.search(r"ready · (\d+) tools, ([\d,]+) tokens", notice.text)
    assert costs and int(costs[1]) >= 8 and int(costs[2].replace(",", "")) > 100, notice.text
    assert "MCP tool schemas:" in notice.text
    status = next(e for e in await collect_events(session, "/status") if isinstance(e, ev.Notice)).text
    assert re.search(r"^MCP +1 ready, 1 failed: ghost \(/mcp for details\)$", status, re.M), status
    assert re.search(r"^plugins +kit 1\.0\.0$", status, re.M), status
    await session.aclose()


async def test_context_before_the_first_turn_counts_the_mcp_tools_the_first_request_will_carry(server, make_session):
    session = make_session(server_table("demo", DEMO))
    usage = next(e for e in await collect_events(session, "/context") if isinstance(e, ev.ContextUsage))
    before = {part.name: part.tokens for part in usage.parts}
    assert before["MCP tools"] > 100
    server.script(Reply(text="ok"))
    await collect_events(session, "hi")
    usage = next(e for e in await collect_events(session, "/context") if isinstance(e, ev.ContextUsage))
    after = {part.name: part.tokens for part in usage.parts}["MCP tools"]
    assert after == session.tokens.calibrated(before["MCP tools"])  # the same tools, counted after the usage report
    await session.aclose()


async def test_a_subagent_gets_the_mcp_tools_it_names_when_the_parent_is_in_search_mode(server, make_session, tmp_path):
    agents = tmp_path / ".agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "linker.md").write_text("---\nname: linker\ndescription: links\ntools: mcp__mini__echo, Read\n---\nLink.")
    (agents / "finder.md").write_text("---\nname: finder\ndescription: finds\ntools: mcp__demo, Read\n---\nFind.")
    session = make_session(server_table("demo", [*DEMO, "--tools", "150"]) + server_table("mini", DEMO), "memory=false")
    task = lambda agent: ToolCall("task", {"agent": agent, "description": agent, "prompt": "go"})  # noqa: E731
    server.script(
        Reply(tool_calls=[task("linker")]),
        Reply(tool_calls=[ToolCall("mcp__mini__echo", {"text": "hi"}, "l1")]),
        Reply(text="linked"),
        Reply(tool_calls=[task("finder")]),
        Reply(
            tool_calls=[
                ToolCall("mcp_search", {"query": "echo"}, "f1"),
                ToolCall("mcp_call", {"server": "demo", "tool": "gen_42", "arguments": {"query": "q"}}, "f2"),
                ToolCall("mcp_call", {"server": "mini", "tool": "echo", "arguments": {"text": "x"}}, "f3"),
            ]
        ),
        Reply(text="found"),
        Reply(text="both done"),
    )
    events = await collect_events(session, "delegate")
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "both done"
    parent, linker, linker_end, _, finder, finder_end, _ = server.requests
    assert tool_names(parent)[-2:] == ["mcp_search", "mcp_call"]  # 166 tools: the parent is in search mode
    assert tool_names(linker) == ["read_file", "mcp__mini__echo"]  # one small schema fits the child's budget
    assert tool_outputs(linker_end)["l1"] == "echo: hi"
    assert tool_names(finder) == ["read_file", "mcp_search", "mcp_call"]  # 158 tools do not: search, over them only
    outputs = tool_outputs(finder_end)
    assert "of 158 MCP tools match" in outputs["f1"] and "server: demo\ntool: echo" in outputs["f1"]
    assert "server: mini" not in outputs["f1"]
    assert outputs["f2"] == "generated tool 42 got 'q'"
    assert "no MCP tool 'echo' on server 'mini'" in outputs["f3"]  # a tool it does not name
    await session.aclose()


async def test_in_the_lean_profile_mcp_tools_are_behind_tool_search(server, make_session):
    session = make_session(server_table("demo", DEMO), "model_context_window=4096")
    server.script(
        Reply(tool_calls=[ToolCall("tool_search", {"query": "echo text"}, "l1")]),
        Reply(tool_calls=[ToolCall("tool_call", {"name": "mcp__demo__echo", "arguments": {"text": "lean"}}, "l2")]),
        Reply(text="done"),
    )
    events = await collect_events(session, "echo it")
    await session.aclose()

    assert session.lean
    first = server.requests[0]
    assert not any(name.startswith("mcp") for name in tool_names(first)) and "tool_search" in tool_names(first)
    outputs = tool_outputs(server.requests[2])
    assert "name: mcp__demo__echo" in outputs["l1"] and "input_schema" in outputs["l1"]
    assert outputs["l2"] == "echo: lean"
    ends = [event for event in events if isinstance(event, ev.ToolCallEnd)]
    assert [end.name for end in ends] == ["tool_search", "mcp__demo__echo"]

"""`agent acp` driven by the ACP library's own client side over real pipes, against the fake
model server: what an editor (Zed, JetBrains, Neovim, Emacs) sees."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    Implementation,
    RequestPermissionResponse,
    TextResourceContents,
)

from tests.conftest import agent_process_env, provider_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, gone
from tests.waiting import until

pytestmark = pytest.mark.timeout(90)


class RecordingClient:
    """An editor: records every update, answers permission requests with ``answer``."""

    def __init__(self, answer: str | None = "allow_once"):
        self.answer = answer
        self.updates: list[tuple[str, object]] = []
        self.permission_requests: list = []

    async def request_permission(self, session_id, tool_call, options, **_):
        self.permission_requests.append(tool_call)
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def session_update(self, session_id, update, **_):
        self.updates.append((session_id, update))

    def kinds(self) -> list[str]:
        return [update.session_update for _, update in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for _, u in self.updates if u.session_update == kind)

    def of(self, kind: str) -> list:
        return [u for _, u in self.updates if u.session_update == kind]


# The editor closes the agent's stdin and waits for it to end; the SDK's 2 s (then SIGTERM) is
# shorter than an agent's exit on a loaded machine, and a SIGTERM that races that exit fails the test.
EDITOR_CLOSES = {"shutdown_timeout": 30.0}


def agent_env(server, provider: str = "openai") -> dict[str, str]:
    return agent_process_env(**provider_env(server, provider))


def spawn(client, server, cwd, *args: str, env: dict | None = None):
    return spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "agent_cli",
        "acp",
        "-m",
        "test-model",
        *args,
        env=env or agent_env(server),
        cwd=str(cwd),
        transport_kwargs=EDITOR_CLOSES,
    )


async def pid_written(pid_file, within: float = 10.0) -> int:
    """The pid a command wrote to ``pid_file`` (``echo $$ > file``), once it is there."""
    for _ in range(int(within / 0.05)):
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        await asyncio.sleep(0.05)
    raise AssertionError(f"no pid in {pid_file} within {within} s")


async def started(conn, cwd) -> str:
    reply = await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name="test-editor", version="1"),
    )
    assert reply.agent_capabilities.load_session and reply.agent_capabilities.prompt_capabilities.embedded_context
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    assert {mode.id for mode in session.modes.available_modes} == {"agent", "ask", "plan"}
    return session.session_id


async def test_a_prompt_streams_text_and_runs_an_approved_command(server, tmp_path):
    server.script(
        Reply(text="Let me check.", tool_calls=[ToolCall("shell", {"command": "touch made && echo acp-shell"})]),
        Reply(text="It printed acp-shell."),
    )
    client = RecordingClient("allow_once")
    async with spawn(client, server, tmp_path, "-a", "untrusted") as (conn, process):
        session_id = await started(conn, tmp_path)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("run it")])
        assert reply.stop_reason == "end_turn"
        assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert "Let me check." in client.text() and "It printed acp-shell." in client.text()
    assert len(client.permission_requests) == 1 and "touch made" in client.permission_requests[0].title
    start = client.of("tool_call")[0]
    assert start.kind == "execute" and start.title == "touch made && echo acp-shell"
    done = client.of("tool_call_update")[-1]
    assert done.status == "completed" and "acp-shell" in done.content[0].content.text
    assert "available_commands_update" in client.kinds()
    usage = client.of("usage_update")[-1]
    assert 0 < usage.used < usage.size
    server.assert_done()


async def test_a_rejected_command_does_not_run(server, tmp_path):
    marker = tmp_path / "ran"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"touch {marker}"})]), Reply(text="Refused."))
    client = RecordingClient("reject_once")
    async with spawn(client, server, tmp_path, "-a", "untrusted") as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("touch it")])
    assert not marker.exists()
    assert client.of("tool_call_update")[-1].status == "failed"


async def test_a_patch_shows_old_and_new_text_and_the_plan_streams(server, tmp_path):
    (tmp_path / "notes.txt").write_text("old line\n")
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old line\n+new line\n*** End Patch\n"
    plan = {"plan": [{"step": "edit notes", "status": "in_progress"}, {"step": "check", "status": "pending"}]}
    server.script(
        Reply(tool_calls=[ToolCall("update_plan", plan), ToolCall("apply_patch", {"patch": patch})]),
        Reply(text="Edited."),
    )
    client = RecordingClient()
    async with spawn(client, server, tmp_path, "-a", "never") as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("edit")])
    entries = client.of("plan")[-1].entries
    assert [(e.content, e.status) for e in entries] == [("edit notes", "in_progress"), ("check", "pending")]
    edit = next(u for u in client.of("tool_call") if u.kind == "edit")
    assert edit.locations[0].path.endswith("notes.txt")
    diff = client.of("tool_call_update")[-1].content[0]
    assert diff.type == "diff" and diff.old_text == "old line\n" and diff.new_text == "new line\n"


async def test_cancel_stops_the_running_command(server, tmp_path):
    pid_file = tmp_path / "pid"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"echo $$ > {pid_file}; exec sleep 60"})]))
    client = RecordingClient()
    # without a sandbox, so that $$ is the command's pid on this machine (bubblewrap has its own pid namespace)
    async with spawn(client, server, tmp_path, "-a", "never", "-s", "danger-full-access") as (conn, _):
        session_id = await started(conn, tmp_path)
        prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
        pid = await pid_written(pid_file)
        assert alive(pid)
        await conn.cancel(session_id=session_id)
        reply = await asyncio.wait_for(prompt, 30)
        assert reply.stop_reason == "cancelled"
        assert await gone(pid, within=10)


async def test_a_typed_mode_command_tells_the_editor(server, tmp_path):
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("/mode plan")])
        assert [update.current_mode_id for update in client.of("current_mode_update")] == ["plan"]
    assert server.requests == []  # a command, not a prompt


async def test_load_replays_the_history_and_modes_switch(server, tmp_path):
    server.script(Reply(text="First answer."), Reply(text="Second answer."))
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("first question")])
        await conn.set_session_mode(session_id=session_id, mode_id="ask")
        assert client.of("current_mode_update")[-1].current_mode_id == "ask"
    replayed = RecordingClient()
    async with spawn(replayed, server, tmp_path) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        loaded = await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
        assert loaded.modes.current_mode_id in ("agent", "ask")
        assert "first question" in replayed.text("user_message_chunk")
        assert "First answer." in replayed.text()
        await conn.prompt(session_id=session_id, prompt=[text_block("second question")])
    assert "first question" in json.dumps(server.requests[-1].body["input"])


async def test_a_session_open_in_this_connection_loads_again(server, tmp_path):
    # An editor reopening a thread from its history in the same agent process: the open session
    # holds its file's lock, so restoring it from disk again failed with "resource not found".
    server.script(Reply(text="First answer."), Reply(text="Second answer."))
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("first question")])
        client.updates.clear()
        await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
        assert "first question" in client.text("user_message_chunk") and "First answer." in client.text()
        await conn.prompt(session_id=session_id, prompt=[text_block("second question")])
    assert "first question" in json.dumps(server.requests[-1].body["input"])


async def test_an_embedded_resource_is_attached_like_a_file(server, tmp_path):
    server.script(Reply(text="Seen."))
    client = RecordingClient()
    resource = EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(
            uri=f"file://{tmp_path}/unsaved.py", text="print('from the editor buffer')", mime_type="text/x-python"
        ),
    )
    async with spawn(client, server, tmp_path) as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(session_id=session_id, prompt=[text_block("look at this"), resource])
    sent = json.dumps(server.requests[0].body["input"][-1])
    assert "from the editor buffer" in sent and "unsaved.py" in sent


async def test_a_linked_file_with_a_space_is_attached_and_an_empty_prompt_is_refused(server, tmp_path):
    from acp import resource_link_block

    (tmp_path / "my notes.txt").write_text("spaced content\n")
    server.script(Reply(text="Seen."))
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, _):
        session_id = await started(conn, tmp_path)
        await conn.prompt(
            session_id=session_id,
            prompt=[text_block("look"), resource_link_block("my notes.txt", f"file://{tmp_path}/my%20notes.txt")],
        )
        with pytest.raises(RequestError) as empty:  # nothing to send: no model request for it
            await conn.prompt(session_id=session_id, prompt=[])
        assert empty.value.code == -32602
    assert "spaced content" in json.dumps(server.requests[0].body["input"][-1])
    assert len(server.requests) == 1


async def test_protocol_errors_never_crash_the_agent(server, tmp_path):
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, process):
        with pytest.raises(RequestError) as unknown_session:
            await conn.prompt(session_id="nope", prompt=[text_block("x")])
        assert unknown_session.value.code == -32602
        process.stdin.write(b"{not json\n")
        await process.stdin.drain()
        session_id = await started(conn, tmp_path)  # still answering
        assert session_id


def test_lines_that_are_not_json_objects_get_errors_and_the_agent_carries_on(server, tmp_path):
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}}
    lines = ["[1, 2, 3]", "42", "{not json", "", json.dumps(initialize)]
    proc = subprocess.run(
        [sys.executable, "-m", "agent_cli", "acp", "-m", "test-model"],
        cwd=tmp_path,
        env=agent_env(server),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [reply.get("error", {}).get("code") for reply in replies] == [-32600, -32600, -32700, None]
    assert all(reply["id"] is None for reply in replies[:3])
    assert replies[3]["id"] == 1 and replies[3]["result"]["protocolVersion"] == PROTOCOL_VERSION


async def test_a_missing_key_is_auth_required(server, tmp_path):
    env = agent_env(server)
    env.pop("OPENAI_API_KEY")
    async with spawn(RecordingClient(), server, tmp_path, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as error:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert error.value.code == -32000 and "OPENAI_API_KEY" in json.dumps(error.value.data)


async def test_a_client_that_disappears_ends_the_agent_and_its_commands(server, tmp_path):
    pid_file = tmp_path / "pid"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"echo $$ > {pid_file}; exec sleep 60"})]))
    client = RecordingClient()
    async with spawn(client, server, tmp_path, "-a", "never", "-s", "danger-full-access") as (conn, process):
        session_id = await started(conn, tmp_path)
        prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
        command_pid = await pid_written(pid_file)
        process.stdin.close()  # the editor went away
        assert await asyncio.wait_for(process.wait(), 20) is not None
        prompt.cancel()
    assert await gone(command_pid, within=10)


class EditorClient(RecordingClient):
    """An editor with an unsaved buffer: reads and writes go to it, not to the disk."""

    def __init__(self, buffers: dict[str, str]):
        super().__init__()
        self.buffers = buffers
        self.reads: list[str] = []

    async def read_text_file(self, session_id, path, line=None, limit=None, **_):
        from acp.schema import ReadTextFileResponse

        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id, path, content, **_):
        self.buffers[path] = content


async def test_client_files_are_read_and_written_through_the_editor(server, tmp_path):
    from acp.schema import FileSystemCapabilities

    source = tmp_path / "app.py"
    source.write_text("saved = 1\n")
    client = EditorClient({str(source): "unsaved = 2\n"})
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-unsaved = 2\n+unsaved = 3\n*** End Patch\n"
    server.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "app.py"})]),
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]),
        Reply(text="Done."),
    )
    async with spawn(client, server, tmp_path, "-a", "never") as (conn, _):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit app.py")])
    assert "unsaved = 2" in json.dumps(server.requests[1].body["input"])  # the model read the buffer
    assert client.buffers[str(source)] == "unsaved = 3\n"  # the edit landed in the buffer
    assert source.read_text() == "saved = 1\n"  # and not on the disk behind the editor's back


class TerminalClient(RecordingClient):
    """An editor with terminals: it runs what the agent asks in a process of its own."""

    def __init__(self):
        super().__init__()
        self.commands: list[list[str]] = []
        self.processes: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytes] = {}

    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None, output_byte_limit=None, **_):
        from acp.schema import CreateTerminalResponse

        self.commands.append([command, *(args or [])])
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.commands)}"
        self.processes[terminal_id] = process
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id, terminal_id, **_):
        from acp.schema import WaitForTerminalExitResponse

        process = self.processes[terminal_id]
        self.outputs[terminal_id] = await process.stdout.read()
        return WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(self, session_id, terminal_id, **_):
        from acp.schema import TerminalOutputResponse

        return TerminalOutputResponse(output=self.outputs.get(terminal_id, b"").decode(), truncated=False)

    async def kill_terminal(self, session_id, terminal_id, **_):
        self.processes[terminal_id].kill()

    async def release_terminal(self, session_id, terminal_id, **_):
        pass


async def test_commands_run_in_the_client_terminal_still_confined(server, tmp_path):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo in-the-terminal; echo $OPENAI_API_KEY"})]),
        Reply(text="Ran."),
    )
    client = TerminalClient()
    async with spawn(client, server, tmp_path, "-a", "never") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(terminal=True))
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
    command = client.commands[0]
    assert command[:3] == ["env", "-i", "/bin/sh"]  # exactly the session's (scrubbed) environment
    assert not any("test-key" in word or word.startswith("PATH=") for word in command)  # no variable in argv
    refs = [u for u in client.of("tool_call_update") if u.content and u.content[0].type == "terminal"]
    assert refs and refs[0].content[0].terminal_id == "term-1"
    sent = json.dumps(server.requests[1].body["input"])
    assert "in-the-terminal" in sent and "test-key" not in sent


async def test_a_repository_server_runs_only_with_trust(server, tmp_path):
    marker = tmp_path / "server-ran"
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"repo": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}}}
        )
    )
    client = RecordingClient()
    async with spawn(client, server, tmp_path) as (conn, _):
        await started(conn, tmp_path)
        await until(lambda: "not trusted" in client.text("agent_thought_chunk"), within=5, what="the trust notice")
    assert "server repo" in client.text("agent_thought_chunk") and "agent acp --trust" in client.text(
        "agent_thought_chunk"
    )
    assert not marker.exists()
    async with spawn(RecordingClient(), server, tmp_path, "--trust") as (conn, _):
        await started(conn, tmp_path)
        await until(marker.exists, within=5, what="the repository's server to run")


async def test_sessions_need_initialize_first(server, tmp_path):
    async with spawn(RecordingClient(), server, tmp_path) as (conn, _):
        with pytest.raises(RequestError) as early:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert early.value.code == -32600
        assert await started(conn, tmp_path)

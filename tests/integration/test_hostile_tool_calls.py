"""Hostile tool calls end in a tool error, never a hang or a crash (issue 27, items 7, 8, 9):
real `agent exec` processes against the fake server, real FIFOs, real signals checked by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, catches, holds_open
from tests.waiting import wait_for

PROVIDERS = ("openai-chat", "openai")  # the fake server cannot stream 100,000 levels as Anthropic input


def exec_args(provider: str, *rest: str) -> list[str]:
    return ["exec", "--provider", provider, "-m", "m", *rest]


def tool_outputs(request) -> list[str]:
    """The tool outputs a request carries, on either wire format."""
    if "input" in request.body:  # the Responses API
        return [item["output"] for item in request.body["input"] if item.get("type") == "function_call_output"]
    outputs = []
    for message in request.body["messages"]:
        if message["role"] == "tool":
            outputs.append(message["content"])
        elif isinstance(message.get("content"), list):
            outputs.extend(
                part["content"] if isinstance(part["content"], str) else part["content"][0]["text"]
                for part in message["content"]
                if part.get("type") == "tool_result"
            )
    return outputs


# --- item 7: a FIFO never blocks the agent --------------------------------------------------


def test_read_file_refuses_a_fifo_instead_of_hanging(server, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "pipe"})]), Reply(text="noted"))
    result = run_agent(
        exec_args("openai-chat", "read the pipe"), cwd=tmp_path, env=provider_env(server, "openai-chat"), timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "pipe is a named pipe (FIFO), not a file" in tool_outputs(server.requests[1])[0]


def test_an_at_reference_to_a_fifo_is_refused_before_anything_is_sent(server, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    result = run_agent(
        exec_args("openai-chat", "summarize @./pipe"), cwd=tmp_path, env=provider_env(server, "openai-chat"), timeout=60
    )
    assert result.returncode == 2
    assert "@./pipe: refused, it is a named pipe (FIFO)" in result.stderr
    assert server.requests == []


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_read_file_refuses_a_device(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "/dev/zero"})]), Reply(text="ok"))
    result = run_agent(exec_args("openai-chat", "read it"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert "/dev/zero is a device, not a file" in tool_outputs(server.requests[1])[0]


# --- item 8: numbers clamped, and the second Ctrl+C ends the process -------------------------


def test_a_huge_list_dir_depth_is_clamped_and_said(server, tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    call = ToolCall("list_dir", {"path": ".", "depth": 10**15, "limit": 10**18})
    server.script(Reply(tool_calls=[call]), Reply(text="listed"))
    result = run_agent(
        exec_args("openai-chat", "list"), cwd=tmp_path, env=provider_env(server, "openai-chat"), timeout=60
    )
    assert result.returncode == 0, result.stderr
    output = tool_outputs(server.requests[1])[0]
    assert "a/" in output and "b/" in output
    assert "[depth 1000000000000000 is more than the maximum; used 50]" in output
    assert "[limit 1000000000000000000 is more than the maximum; used 10,000]" in output


def test_a_huge_shell_timeout_is_clamped_and_said(server, tmp_path):
    call = ToolCall("shell", {"command": "echo ran", "timeout_ms": 10**18})
    server.script(Reply(tool_calls=[call]), Reply(text="done"))
    result = run_agent(exec_args("openai-chat", "run"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    output = tool_outputs(server.requests[1])[0]
    assert "Exit code: 0" in output and "ran" in output
    assert "[timeout_ms 1000000000000000000 is more than the maximum; used 86,400,000]" in output


def test_a_second_ctrl_c_ends_exec_while_a_tool_is_still_busy(server, tmp_path):
    """The tool reads a sparse 1 TB text file in a thread that no Ctrl+C can stop; the first Ctrl+C
    stops the turn, the second ends the process by PID, whatever the thread is doing."""
    with open(tmp_path / "huge.txt", "w") as handle:
        handle.write("a line of text\n" * 2000)
    os.truncate(tmp_path / "huge.txt", 1 << 40)  # a hole: no disk used, minutes to read through
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "huge.txt"})]), Reply(text="never sent"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **provider_env(server, "openai-chat")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *exec_args("openai-chat", "read huge.txt")],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        huge = (tmp_path / "huge.txt").resolve()
        wait_for(lambda: holds_open(proc.pid, huge), within=60, what="read_file to open huge.txt")
        proc.send_signal(signal.SIGINT)
        # taken: exec stopped the turn and left the next SIGINT to the kernel
        wait_for(lambda: not catches(proc.pid, signal.SIGINT), what="exec to take the first Ctrl+C")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
        assert not alive(proc.pid)
        assert proc.returncode in (130, -signal.SIGINT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


# --- item 9: arguments nested 100,000 deep --------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_deeply_nested_arguments_are_a_tool_error_not_a_crash(server, tmp_path, provider):
    deep = '{"path": ".", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server.script(Reply(tool_calls=[ToolCall("list_dir", deep)]), Reply(text="fine"))
    result = run_agent(exec_args(provider, "go"), cwd=tmp_path, env=provider_env(server, provider), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "internal error" not in result.stderr
    assert "arguments are nested too deeply" in tool_outputs(server.requests[1])[0]


def test_arguments_nested_a_few_hundred_deep_are_refused_too(server, tmp_path):
    deep = '{"path": ".", "x": ' + '{"a": ' * 500 + "1" + "}" * 500 + "}"
    server.script(Reply(tool_calls=[ToolCall("list_dir", deep)]), Reply(text="fine"))
    result = run_agent(exec_args("openai-chat", "go"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "arguments are nested too deeply (more than 100 levels)" in tool_outputs(server.requests[1])[0]

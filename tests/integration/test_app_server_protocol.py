"""`agent app-server` as a client of Codex's protocol meets it, over each transport: a real server
process, our client (agent_cli/app_server/client.py), the fake model server. Every message the
servers send here is also checked against Codex's own schema (app_server_helpers)."""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from agent_cli.app_server.client import AppServerClient, ServerError, thread_text
from tests.app_server_helpers import TOKEN, codex_schema
from tests.conftest import agent_process_env, git_init, provider_env
from tests.fake_server import Reply
from tests.processes import gone

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


@pytest.fixture
def token_file(tmp_path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


async def one_turn(client: AppServerClient, cwd: Path, text: str = "hello") -> dict:
    """A thread with one turn; the params of its turn/completed."""
    thread = (await client.request("thread/start", {"cwd": str(cwd)}))["thread"]
    turn = (await client.request("turn/start", {"threadId": thread["id"], "input": thread_text(text)}))["turn"]
    return await client.notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"])


async def test_stdio_serves_one_client_until_it_closes_stdin(server, repo, tmp_path):
    server.script(Reply(text="over stdio"))
    trace = tmp_path / "trace.jsonl"
    env = agent_process_env(**provider_env(server, "openai-chat"), AGENT_APP_SERVER_TRACE=str(trace))
    argv = [sys.executable, "-m", "agent_cli", "app-server", "--provider", "openai-chat", "-m", "test-model"]
    client = await AppServerClient.spawn(argv, env=env, cwd=str(repo))
    initialized = await client.initialize("stdio-test")
    assert initialized["platformFamily"] == "unix" and initialized["codexHome"]
    completed = await one_turn(client, repo)
    assert completed["turn"]["status"] == "completed"
    assert client.seen("item/completed")[-1]["item"]["text"] == "over stdio"
    deltas = "".join(p["delta"] for p in client.seen("item/agentMessage/delta"))
    assert deltas == "over stdio"
    process = client.channel.process  # type: ignore[attr-defined]
    await client.close()  # stdin closed: the server ends
    assert await gone(process.pid, within=30)
    if (schema := codex_schema()) is not None:
        schema.check_all([json.loads(line) for line in trace.read_text().splitlines()])


async def test_bad_input_gets_json_rpc_errors_and_the_connection_goes_on(server, repo, app_servers, token_file):
    running = app_servers(repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token",
                                 "--ws-token-file", str(token_file))  # fmt: skip
    async with await AppServerClient.connect(running.url, token=TOKEN) as client:
        with pytest.raises(ServerError, match="Not initialized") as early:
            await client.request("thread/list")
        assert early.value.code == -32600
        await client.initialize()
        with pytest.raises(ServerError, match="Already initialized"):
            await client.request("initialize", {"clientInfo": {"name": "again", "version": "1"}})
        with pytest.raises(ServerError, match="Method not found") as unknown:
            await client.request("fs/readFile", {"path": "/etc/passwd"})
        assert unknown.value.code == -32601
        await client.send_text("{this is not json")
        await client.send_text("[1, 2, 3]")
        with pytest.raises(ServerError) as bad_params:
            await client.request("thread/read", {"threadId": 42})
        assert bad_params.value.code == -32602
        with pytest.raises(ServerError, match="no saved session"):
            await client.request("thread/read", {"threadId": "no-such-thread"})
        parse_errors = [m for m in client.received if m.get("id") is None and "error" in m]
        assert [m["error"]["code"] for m in parse_errors] == [-32700, -32600]
        assert (await client.request("thread/loaded/list"))["data"] == []  # still answering


async def test_websocket_needs_the_token_before_anything(server, repo, app_servers, token_file):
    running = app_servers(repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token",
                                 "--ws-token-file", str(token_file))  # fmt: skip
    for token in (None, "wrong-token", TOKEN + "x", TOKEN[:-1]):
        with pytest.raises(InvalidStatus) as refused:
            await AppServerClient.connect(running.url, token=token)
        assert refused.value.response.status_code == 401
    with pytest.raises(InvalidStatus) as from_a_page:  # a web page's request, token or not
        await AppServerClient.connect(running.url, token=TOKEN, origin="http://evil.example")
    assert from_a_page.value.response.status_code == 403
    host, port = running.url.removeprefix("ws://").rsplit(":", 1)
    for path in ("/readyz", "/healthz"):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", path)
        assert connection.getresponse().status == 200
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/healthz", headers={"Origin": "http://evil.example"})
    assert connection.getresponse().status == 403
    async with await AppServerClient.connect(running.url, token=TOKEN) as client:
        await client.initialize()
        assert (await client.request("thread/loaded/list"))["data"] == []


async def test_the_token_can_be_given_as_its_sha256(server, repo, app_servers):
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    running = app_servers(repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token",
                                 "--ws-token-sha256", digest)  # fmt: skip
    with pytest.raises(InvalidStatus):
        await AppServerClient.connect(running.url, token="nope")
    async with await AppServerClient.connect(running.url, token=TOKEN) as client:
        await client.initialize()


@pytest.mark.parametrize(
    "args, said",
    [
        (["--listen", "ws://127.0.0.1:0"], "a WebSocket needs a token"),
        (["--listen", "ws://0.0.0.0:0", "--ws-auth", "none"], "refusing to listen on 0.0.0.0 without a token"),
        (["--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token"], "exactly one of"),
        (["--listen", "tcp://127.0.0.1:1"], "unknown transport"),
        (["--listen", "unix://", "--ws-auth", "none"], "apply to --listen ws:// only"),
    ],
)
def test_unsafe_or_unclear_listeners_are_refused(args, said, repo, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "agent_cli", "app-server", *args],
        cwd=repo,
        env=agent_process_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and said in done.stderr


def test_a_token_file_others_can_read_is_refused(repo, tmp_path):
    loose = tmp_path / "loose-token"
    loose.write_text(TOKEN)
    loose.chmod(0o644)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_cli",
            "app-server",
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            str(loose),
        ],  # fmt: skip
        cwd=repo,
        env=agent_process_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "can be read by other users" in done.stderr


async def test_the_default_unix_socket_is_private_and_serves_turns(server, repo, app_servers, isolated_home):
    server.script(Reply(text="over the socket"))
    running = app_servers(repo, "--listen", "unix://")
    path = Path(running.url.removeprefix("unix://"))
    assert path == isolated_home / "run" / "app-server.sock"  # no $XDG_RUNTIME_DIR in the tests
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    async with await AppServerClient.connect(running.url) as client:
        await client.initialize()
        completed = await one_turn(client, repo)
        assert completed["turn"]["status"] == "completed"
        assert client.seen("item/completed")[-1]["item"]["text"] == "over the socket"
    running.stop()
    assert not path.exists()  # removed when the server ends


CONFINED_CLIENT = """
import asyncio, ctypes, sys
ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: as our sandbox's launcher does
import socket
from agent_cli.app_server.client import AppServerClient
async def main():
    sock = socket.socket(socket.AF_UNIX)  # connected by hand: our client's own check of the server is not what is tested
    sock.connect(sys.argv[1].removeprefix("unix://"))
    try:
        client = await AppServerClient.connect(sys.argv[1], sock=sock)
    except Exception as exc:
        print("refused", type(exc).__name__, getattr(getattr(exc, "response", None), "status_code", ""))
        return
    await client.initialize()
    print("served", await client.request("thread/loaded/list"))
asyncio.run(main())
"""


async def test_a_confined_process_of_the_same_user_is_refused_on_the_unix_socket(server, repo, app_servers):
    """A command one of the sessions runs in its sandbox is the same user: SO_PEERCRED alone would
    let it drive every session. A process with no_new_privs (what the sandbox sets) is refused."""
    running = app_servers(repo, "--listen", "unix://")
    env = agent_process_env()
    confined = subprocess.run(
        [sys.executable, "-c", CONFINED_CLIENT, running.url], env=env, capture_output=True, text=True, timeout=60
    )
    assert confined.stdout.split()[:3] == ["refused", "InvalidStatus", "403"], confined.stderr
    free = subprocess.run(
        [sys.executable, "-c", CONFINED_CLIENT.replace("ctypes.CDLL", "0 and ctypes.CDLL"), running.url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert free.stdout.startswith("served"), free.stderr


async def test_a_client_that_stops_reading_is_dropped_and_the_others_get_everything(server, repo, app_servers):
    """A 1.2 MB answer to a thread two clients watch, with 1 MB allowed to wait for a client
    (AGENT_APP_SERVER_QUEUE_BYTES; 32 MB by default): the one that stops reading is dropped, the
    other gets every delta, and the turn never waits for the stuck one. Over the Unix socket,
    whose kernel buffers are small enough for the queue to fill."""
    answer = "".join(f"line {n:06d} of a long answer\n" for n in range(40_000))
    server.script(Reply(text=answer, chunk_size=4096))
    running = app_servers(repo, "--listen", "unix://", env={"AGENT_APP_SERVER_QUEUE_BYTES": str(1024 * 1024)})
    reader = await AppServerClient.connect(running.url)
    await reader.initialize()
    thread = (await reader.request("thread/start", {"cwd": str(repo)}))["thread"]
    stuck = await AppServerClient.connect(running.url)
    await stuck.initialize()
    await stuck.request("thread/resume", {"threadId": thread["id"]})
    stuck.channel.websocket.transport.pause_reading()  # type: ignore[attr-defined]
    await reader.request("turn/start", {"threadId": thread["id"], "input": thread_text("go")})
    completed = await reader.notification("turn/completed", timeout=90)
    assert completed["turn"]["status"] == "completed"
    assert "".join(p["delta"] for p in reader.seen("item/agentMessage/delta")) == answer
    assert reader.seen("item/completed")[-1]["item"]["text"] == answer
    stuck.channel.websocket.transport.resume_reading()  # type: ignore[attr-defined]
    await asyncio.wait_for(stuck.closed.wait(), 30)  # it was dropped
    assert "does not read its messages" in "".join(running.stderr)
    assert not reader.closed.is_set()
    await reader.close()
    await stuck.close()


def test_websockets_is_imported_only_by_the_app_server():
    done = subprocess.run(
        [sys.executable, "-c", "import sys, agent_cli.cli; print('websockets' in sys.modules)"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stderr

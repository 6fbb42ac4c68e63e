"""Sessions outlive the clients of `agent app-server`: a client that leaves mid-turn stops nothing,
the next one attaches with the history and the rest of the turn live, an approval left open waits
for it, two clients see the same events and the first answer wins, a thread nobody watches is
unloaded to its session file (and `agent exec resume` takes it up), and a host killed with
SIGKILL mid-turn loses nothing: the turn comes back interrupted. Real server processes, our
protocol client, the fake model server; every message checked against Codex's schema."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from agent_cli.app_server.client import AppServerClient, thread_text
from agent_cli.store.catalog import list_sessions
from agent_cli.store.thread_ids import session_uuid
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.processes import gone, started

pytestmark = pytest.mark.timeout(180)
RELEASE = "while [ ! -e go ]; do sleep 0.05; done; echo released"  # a command that waits for the test


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


async def connected(url: str) -> AppServerClient:
    client = await AppServerClient.connect(url)
    await client.initialize()
    return client


def item_started(kind: str):
    return lambda params: params["item"]["type"] == kind


async def test_a_client_that_leaves_mid_turn_stops_nothing_and_the_next_sees_history_then_the_rest_live(
    server, repo, app_servers
):
    server.script(
        Reply(text="first answer"),
        Reply(text="waiting for the go", tool_calls=[ToolCall("shell", {"command": RELEASE})]),
        Reply(text="all done after the release"),
    )
    running = app_servers(repo, "--listen", "unix://", "-a", "never")
    first = await connected(running.url)
    thread = (await first.request("thread/start", {"cwd": str(repo)}))["thread"]
    await first.request("turn/start", {"threadId": thread["id"], "input": thread_text("one")})
    await first.notification("turn/completed")
    turn = (await first.request("turn/start", {"threadId": thread["id"], "input": thread_text("two")}))["turn"]
    await first.notification("item/started", item_started("commandExecution"))
    await first.close()  # leaves while the command runs

    second = await connected(running.url)
    resumed = await second.request("thread/resume", {"threadId": thread["id"]})
    history = resumed["thread"]["turns"]
    assert [t["status"] for t in history] == ["completed"]  # the running turn is not history yet
    assert [i["type"] for i in history[0]["items"]] == ["userMessage", "agentMessage"]
    assert history[0]["items"][1]["text"] == "first answer"
    live = await second.notification("turn/started")
    assert live["turn"]["id"] == turn["id"] and live["turn"]["status"] == "inProgress"
    running_command = await second.notification("item/started", item_started("commandExecution"))
    assert running_command["item"]["command"] == RELEASE  # the turn as it stands: the items before it first
    shown = [(p["item"]["type"], p["item"].get("text")) for p in second.seen("item/completed")]
    assert shown == [("userMessage", None), ("agentMessage", "waiting for the go")]

    (repo / "go").touch()  # the command ends only now: what follows can only have come live
    command = await second.notification("item/completed", item_started("commandExecution"))
    assert command["item"]["status"] == "completed" and command["item"]["aggregatedOutput"].strip() == "released"
    completed = await second.notification("turn/completed")
    assert completed["turn"]["id"] == turn["id"] and completed["turn"]["status"] == "completed"
    assert second.seen("item/completed")[-1]["item"]["text"] == "all done after the release"
    await second.close()


async def test_an_approval_left_open_waits_for_the_next_client_and_the_first_answer_wins(server, repo, app_servers):
    server.script(
        Reply(text="asking", tool_calls=[ToolCall("shell", {"command": "touch approved.txt"})]),
        Reply(text="the file is there"),
    )
    running = app_servers(repo, "--listen", "unix://")
    first = await connected(running.url)
    thread = (await first.request("thread/start", {"cwd": str(repo), "approvalPolicy": "untrusted"}))["thread"]
    await first.request("turn/start", {"threadId": thread["id"], "input": thread_text("make it")})
    asked = await first.server_request()
    assert asked.method == "item/commandExecution/requestApproval" and asked.params["command"] == "touch approved.txt"
    await first.close()  # gone without answering: the turn waits

    watcher = await connected(running.url)
    status = await watcher.request("thread/read", {"threadId": thread["id"]})
    assert status["thread"]["status"] == {"type": "active", "activeFlags": ["waitingOnApproval"]}
    second, third = await connected(running.url), await connected(running.url)
    for client in (second, third):
        await client.request("thread/resume", {"threadId": thread["id"]})
    to_second, to_third = await second.server_request(), await third.server_request()
    assert to_second.params["itemId"] == to_third.params["itemId"] == asked.params["itemId"]
    assert not (repo / "approved.txt").exists()
    await second.respond(to_second, {"decision": "accept"})
    resolved = await third.notification("serverRequest/resolved")
    assert resolved == {"threadId": thread["id"], "requestId": to_third.id}
    await third.respond(to_third, {"decision": "decline"})  # too late: the first answer won
    for client in (second, third):
        completed = await client.notification("turn/completed")
        assert completed["turn"]["status"] == "completed"
    assert (repo / "approved.txt").exists()
    events = [
        [
            (m, p.get("itemId") or p.get("item", {}).get("id"), p.get("delta"))
            for m, p in c.notifications
            if "turnId" in p
        ]
        for c in (second, third)
    ]
    assert events[0] == events[1]  # both saw every event of the turn, in the same order
    for client in (second, third, watcher):
        await client.close()


async def test_a_thread_nobody_watches_is_unloaded_and_agent_resume_takes_it_up(server, repo, app_servers, tmp_path):
    server.script(Reply(text="from the app-server"), Reply(text="from agent exec"), Reply(text="back again"))
    running = app_servers(repo, "--listen", "unix://", "--idle-unload", "0.2")
    watcher = await connected(running.url)
    client = await connected(running.url)
    thread = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("hi")})
    await client.notification("turn/completed")
    assert (await client.request("thread/unsubscribe", {"threadId": thread["id"]}))["status"] == "unsubscribed"
    await watcher.notification("thread/closed", lambda p: p["threadId"] == thread["id"])
    assert (await watcher.request("thread/loaded/list"))["data"] == []

    done = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "test-model", "resume", thread["id"], "and now?"],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert done.returncode == 0 and "from agent exec" in done.stdout, done.stderr

    resumed = await client.request("thread/resume", {"threadId": thread["id"]})
    assert [i["text"] for t in resumed["thread"]["turns"] for i in t["items"] if i["type"] == "agentMessage"] == [
        "from the app-server",
        "from agent exec",
    ]
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("once more")})
    completed = await client.notification("turn/completed", after=0, where=lambda p: True)
    assert completed["turn"]["status"] == "completed"
    await client.close()
    await watcher.close()


async def test_a_session_of_agent_exec_is_a_thread_by_its_uuid(server, repo, app_servers, isolated_home):
    server.script(Reply(text="made by exec"), Reply(text="continued over the protocol"))
    done = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "hello"], cwd=repo,
                     env=provider_env(server, "openai-chat"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    session_id = list_sessions(isolated_home)[0].id
    running = app_servers(repo, "--listen", "unix://")
    client = await connected(running.url)
    listed = (await client.request("thread/list"))["data"]
    assert [t["id"] for t in listed] == [session_uuid(session_id)] and listed[0]["preview"] == "hello"
    resumed = await client.request("thread/resume", {"threadId": session_uuid(session_id)})
    assert resumed["thread"]["turns"][0]["items"][-1]["text"] == "made by exec"
    await client.request("turn/start", {"threadId": resumed["thread"]["id"], "input": thread_text("more")})
    assert (await client.notification("turn/completed"))["turn"]["status"] == "completed"
    await client.close()


async def test_sigkill_of_the_host_mid_turn_loses_nothing_and_the_turn_comes_back_interrupted(
    server, repo, app_servers
):
    server.script(
        Reply(text="starting the long one", tool_calls=[ToolCall("shell", {"command": "sleep 41.7"})]),
        Reply(text="after the restart"),
    )
    first = app_servers(repo, "--listen", "unix://", "-a", "never")
    client = await connected(first.url)
    thread = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("run the long one")})
    command_pid = await started("sleep", "41.7", within=60)
    first.stop(signal.SIGKILL)
    assert await gone(command_pid, within=15)  # the command did not outlive its host
    await client.close()

    second = app_servers(repo, "--listen", "unix://")
    client = await connected(second.url)
    stored = (await client.request("thread/read", {"threadId": thread["id"], "includeTurns": True}))["thread"]
    assert stored["status"] == {"type": "notLoaded"}
    [turn] = stored["turns"]
    assert turn["status"] == "interrupted"
    assert [i["type"] for i in turn["items"]] == ["userMessage", "agentMessage", "commandExecution"]
    assert turn["items"][0]["content"][0]["text"] == "run the long one"
    await client.request("thread/resume", {"threadId": thread["id"]})
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("go on")})
    assert (await client.notification("turn/completed"))["turn"]["status"] == "completed"
    last_request = server.requests[-1].body["messages"]
    assert any("<turn_aborted>" in json.dumps(m) for m in last_request)  # the model was told the turn was cut
    turns = (await client.request("thread/read", {"threadId": thread["id"], "includeTurns": True}))["thread"]["turns"]
    assert [t["status"] for t in turns] == ["interrupted", "completed"]
    await client.close()


async def test_an_interrupt_stops_the_running_command_and_ends_the_turn_interrupted(server, repo, app_servers):
    server.script(Reply(text="long", tool_calls=[ToolCall("shell", {"command": "sleep 42.3"})]), Reply(text="after"))
    running = app_servers(repo, "--listen", "unix://", "-a", "never")
    client = await connected(running.url)
    thread = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]
    turn = (await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("go")}))["turn"]
    pid = await started("sleep", "42.3", within=60)
    assert await client.request("turn/interrupt", {"threadId": thread["id"], "turnId": turn["id"]}) == {}
    completed = await client.notification("turn/completed")
    assert completed["turn"]["status"] == "interrupted"
    assert await gone(pid, within=15)
    command = client.seen("item/completed")[-1]["item"]
    assert command["type"] == "commandExecution" and command["status"] == "failed"
    status = (await client.request("thread/read", {"threadId": thread["id"]}))["thread"]["status"]
    assert status == {"type": "idle"}
    await client.close()
    running.stop()

    again = app_servers(repo, "--listen", "unix://")  # loaded again from the file: one note, not two
    client = await connected(again.url)
    await client.request("thread/resume", {"threadId": thread["id"]})
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("and now")})
    assert (await client.notification("turn/completed"))["turn"]["status"] == "completed"
    notes = [m for m in server.requests[-1].body["messages"] if "<turn_aborted>" in json.dumps(m)]
    assert len(notes) == 1
    await client.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_ends_the_host_and_every_command_of_its_turns(server, repo, app_servers, signum):
    server.script(Reply(text="long", tool_calls=[ToolCall("shell", {"command": f"sleep 44.{int(signum)}"})]))
    running = app_servers(repo, "--listen", "unix://", "-a", "never")
    client = await connected(running.url)
    thread = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("go")})
    pid = await started("sleep", f"44.{int(signum)}", within=60)
    await asyncio.to_thread(running.stop, signum)  # waits for the server's pid to be gone
    assert await gone(pid, within=15)
    await client.close()

"""Every method `agent app-server` answers, once, by a client as Codex's TUI or IDE extension
would call it: what it returns and what it changes (the session files, their names, the
archive). The schema test: every message sent here is checked against the schema the installed
Codex CLI generates (app_server_helpers.AppServers), and this module fails when the CLI is
missing rather than pass without the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.app_server.client import AppServerClient, ServerError, thread_text
from tests.app_server_helpers import NO_CODEX, codex_missing, codex_schema
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall

pytestmark = pytest.mark.timeout(180)
SETUP_METHODS = {  # what Codex's TUI asks before it draws its composer, with its params
    "account/read": {},
    "model/list": {"includeHidden": True},
    "hooks/list": {"cwds": []},
    "config/read": {"includeLayers": True, "cwd": "."},
    "configRequirements/read": None,
    "collaborationMode/list": {},
    "skills/list": {"forceReload": True},
    "plugin/installed": {"installSuggestionPluginNames": None},
}


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


async def test_the_schema_is_generated_by_the_installed_codex_cli():
    if codex_missing():
        pytest.skip(NO_CODEX)
    schema = codex_schema()
    assert schema is not None and "item/commandExecution/requestApproval" in schema.requests
    assert {"turn/started", "item/agentMessage/delta", "serverRequest/resolved"} <= schema.notifications.keys()


async def test_every_method_answers_as_codex_clients_expect(server, repo, app_servers, isolated_home):
    server.script(
        Reply(text="first " + "a long answer worth compacting. " * 150, reasoning="thinking it over"),
        Reply(
            text="patching",
            tool_calls=[
                ToolCall("apply_patch", {"patch": "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch"})
            ],
        ),
        Reply(
            text="patched", tool_calls=[ToolCall("update_plan", {"plan": [{"step": "patch", "status": "completed"}]})]
        ),
        Reply(text="planned"),
        Reply(text="a summary of the conversation"),  # the compaction
        Reply(text="No findings: the change is fine."),  # the review
        Reply(text="steered answer"),
    )
    running = app_servers(repo, "--listen", "unix://", "-a", "never")
    client = await AppServerClient.connect(running.url)
    await client.initialize("methods-test", opt_out=["thread/tokenUsage/updated"])
    for method, params in SETUP_METHODS.items():
        assert await client.request(method, params) is not None
    skills = (await client.request("skills/list", {"cwds": [str(repo)]}))["data"][0]["skills"]
    assert "commit" in {skill["name"] for skill in skills}  # a bundled skill

    started = await client.request("thread/start", {"cwd": str(repo), "sandbox": "workspace-write"})
    thread_id = started["thread"]["id"]
    assert started["sandbox"]["type"] == "workspaceWrite" and started["approvalPolicy"] == "never"
    assert started["thread"]["status"] == {"type": "idle"} and started["cwd"] == str(repo)

    await run_turn(client, thread_id, "think first")
    assert [p["delta"] for p in client.seen("item/reasoning/summaryTextDelta")]
    assert not client.seen("thread/tokenUsage/updated")  # opted out
    await run_turn(client, thread_id, "patch it")
    assert (repo / "new.txt").read_text() == "hello\n"
    change = [p["item"] for p in client.seen("item/completed") if p["item"]["type"] == "fileChange"][-1]
    assert change["status"] == "completed" and change["changes"][0]["path"].endswith("new.txt")
    assert client.seen("turn/diff/updated") and client.seen("turn/plan/updated")[-1]["plan"][0]["status"] == "completed"

    await client.request("thread/compact/start", {"threadId": thread_id})
    await client.notification("thread/compacted")
    await client.notification("turn/completed", after=len(client.notifications) - 1)
    review = await client.request("review/start", {"threadId": thread_id, "target": {"type": "uncommittedChanges"}})
    assert review["reviewThreadId"] == thread_id
    done = await client.notification("turn/completed", lambda p: p["turn"]["id"] == review["turn"]["id"])
    assert done["turn"]["status"] == "completed"
    exited = [p["item"] for p in client.seen("item/completed") if p["item"]["type"] == "exitedReviewMode"]
    assert exited[-1]["review"] == "No findings: the change is fine."

    with pytest.raises(ServerError, match="no running turn"):
        await client.request("turn/steer", {"threadId": thread_id, "input": thread_text("x"), "expectedTurnId": "t"})
    await run_turn(client, thread_id, "one more")

    turns = await client.request("thread/turns/list", {"threadId": thread_id, "sortDirection": "asc"})
    assert [t["items"][0]["content"][0]["text"] for t in turns["data"]][:2] == ["think first", "patch it"]
    items = await client.request("thread/items/list", {"threadId": thread_id, "limit": 2})
    assert len(items["data"]) == 2 and items["nextCursor"] == "2"

    assert await client.request("thread/name/set", {"threadId": thread_id, "name": "named thread"}) == {}
    assert (await client.notification("thread/name/updated"))["threadName"] == "named thread"
    listed = (await client.request("thread/list", {"searchTerm": "think"}))["data"]
    assert [(t["id"], t["name"]) for t in listed] == [(thread_id, "named thread")]
    assert (await client.request("thread/loaded/list"))["data"] == [thread_id]

    forked = await client.request("thread/fork", {"threadId": thread_id})
    fork_id = forked["thread"]["id"]
    assert fork_id != thread_id and forked["thread"]["forkedFromId"] == thread_id
    assert len(forked["thread"]["turns"]) == len(
        (await client.request("thread/turns/list", {"threadId": thread_id}))["data"]
    )

    assert (await client.request("thread/unsubscribe", {"threadId": fork_id}))["status"] == "unsubscribed"
    assert (await client.request("thread/unsubscribe", {"threadId": fork_id}))["status"] == "notSubscribed"
    assert await client.request("thread/archive", {"threadId": fork_id}) == {}
    assert fork_id not in [t["id"] for t in (await client.request("thread/list"))["data"]]
    archived = (await client.request("thread/list", {"archived": True}))["data"]
    assert [t["id"] for t in archived] == [fork_id]
    assert (await client.request("thread/unarchive", {"threadId": fork_id}))["thread"]["id"] == fork_id
    assert fork_id in [t["id"] for t in (await client.request("thread/list"))["data"]]
    assert (await client.request("thread/unsubscribe", {"threadId": fork_id}))["status"] == "notLoaded"

    read = await client.request("thread/read", {"threadId": thread_id, "includeTurns": True})
    assert read["thread"]["status"] == {"type": "idle"} and read["thread"]["name"] == "named thread"
    assert await client.request("turn/interrupt", {"threadId": thread_id}) == {}  # nothing runs: nothing to do
    await client.close()


async def test_steering_adds_input_to_the_running_turn(server, repo, app_servers):
    """``turn/steer`` while a command runs: the model reads the input with its next request, in the
    same turn (the session core's Steer operation)."""
    release = "while [ ! -e go ]; do sleep 0.05; done"
    server.script(
        Reply(text="working", tool_calls=[ToolCall("shell", {"command": release})]),
        Reply(text="done, and the steered part too"),
    )
    running = app_servers(repo, "--listen", "unix://", "-a", "never")
    client = await AppServerClient.connect(running.url)
    await client.initialize()
    thread_id = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]["id"]
    turn = (await client.request("turn/start", {"threadId": thread_id, "input": thread_text("start")}))["turn"]
    await client.notification("item/started", lambda p: p["item"]["type"] == "commandExecution")
    with pytest.raises(ServerError, match="a turn is running"):
        await client.request("turn/start", {"threadId": thread_id, "input": thread_text("another")})
    steered = await client.request(
        "turn/steer", {"threadId": thread_id, "input": thread_text("also this"), "expectedTurnId": turn["id"]}
    )
    assert steered == {"turnId": turn["id"]}
    (repo / "go").touch()
    completed = await client.notification("turn/completed")
    assert completed["turn"]["id"] == turn["id"] and completed["turn"]["status"] == "completed"
    shown = [p["item"] for p in client.seen("item/completed") if p["turnId"] == turn["id"]]
    assert [i["content"][0]["text"] for i in shown if i["type"] == "userMessage"] == ["start", "also this"]
    assert shown[-1]["text"] == "done, and the steered part too"
    assert "also this" in str(server.requests[-1].body["messages"][-1])  # read with the next request
    await client.close()


async def test_a_turn_carries_its_settings_and_only_the_folder_is_refused(server, repo, app_servers, tmp_path):
    server.script(Reply(text="a plan"))
    running = app_servers(repo, "--listen", "unix://")
    client = await AppServerClient.connect(running.url)
    await client.initialize()
    thread_id = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]["id"]
    with pytest.raises(ServerError, match="start a new thread"):
        await client.request("turn/start", {"threadId": thread_id, "input": thread_text("x"), "cwd": str(tmp_path)})
    mode = {
        "mode": "plan",
        "settings": {"model": "test-model", "reasoning_effort": None, "developer_instructions": None},
    }
    settings = {"collaborationMode": mode, "approvalPolicy": "never", "sandboxPolicy": {"type": "readOnly"}}
    await client.request("turn/start", {"threadId": thread_id, "input": thread_text("plan it"), **settings})
    await client.notification("turn/completed")
    fragments = [m["content"] for m in server.requests[-1].body["messages"] if "<mode>" in str(m["content"])]
    assert len(fragments) == 1 and "plan" in str(fragments[0])  # the switch reached the model, as /mode plan does
    texts = [p["item"].get("text") for p in client.seen("item/completed") if p["item"]["type"] == "agentMessage"]
    assert texts == ["a plan"]  # the settings themselves say nothing in the turn
    now = await client.request("thread/resume", {"threadId": thread_id})
    assert now["approvalPolicy"] == "never" and now["sandbox"]["type"] == "readOnly"
    await client.close()


async def run_turn(client: AppServerClient, thread_id: str, text: str) -> dict:
    turn = (await client.request("turn/start", {"threadId": thread_id, "input": thread_text(text)}))["turn"]
    completed = await client.notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"])
    assert completed["turn"]["status"] == "completed", completed
    return completed

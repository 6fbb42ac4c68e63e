"""Diagnostics after edits from real language servers (basedpyright, pylsp and ruff from the
`test` extra), in a real session against the fake model server: what the model reads in its next
request, what it does not, a server that hangs or crashes, the `lsp` tool, and the servers' end."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.commands.context_usage import context_usage
from tests.conftest import REPO, git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, gone, started
from tests.session_helpers import collect_events, make_session

WAIT = "lsp_wait_ms=60000"  # a cold server on a loaded machine; a healthy one answers in about a second
MISBEHAVING = REPO / "tests" / "lsp_servers" / "misbehaving.py"


def need(command: str) -> None:
    if shutil.which(command) is None:
        pytest.skip(f"{command} is not installed (the `test` extra installs it)")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENT_LSP_AUTODETECT")  # the servers on PATH start, as for a user
    root = git_init(tmp_path / "repo")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (root / "util.py").write_text("def helper(x: int) -> int:\n    return x + 1\n")
    (root / "main.py").write_text("from util import helper\n\nprint(helper(1))\nprint(already_broken)\n")
    return root


def patch_main(line: str) -> ToolCall:
    return ToolCall(
        "apply_patch",
        {"patch": f"*** Begin Patch\n*** Update File: main.py\n@@\n print(helper(1))\n+{line}\n*** End Patch"},
    )


def tool_messages(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


async def test_an_undefined_name_reaches_the_next_request_and_old_errors_do_not(server, repo, monkeypatch):
    need("basedpyright-langserver")
    server.script(
        Reply(tool_calls=[patch_main("print(brand_new_name)")]),
        Reply(tool_calls=[patch_main("value = 1")]),  # clean: nothing is added, nothing repeated
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, WAIT)
    try:
        events = await collect_events(session, "edit main.py")
    finally:
        await session.aclose()
    first, second = tool_messages(server.requests[1])[0], tool_messages(server.requests[2])[1]
    assert '"brand_new_name" is not defined' in first and "main.py:4:7: error:" in first
    assert "already_broken" not in first  # there before the edit: not the edit's doing
    assert "<diagnostics>" not in second  # a clean edit adds nothing, and brand_new_name is not told again
    batches = [event for event in events if isinstance(event, ev.Diagnostics)]
    assert len(batches) == 1 and batches[0].errors == 1 and batches[0].servers == ("basedpyright",)
    parts = {part.name: part.tokens for part in context_usage(session).parts}
    assert 20 < parts["diagnostics"] < 200  # /context shows what they cost
    server.assert_done()


@pytest.mark.parametrize("name", ["pylsp", "ruff"])
async def test_other_python_servers_when_configured(server, repo, monkeypatch, name):
    need(name)
    server.script(Reply(tool_calls=[patch_main("print(brand_new_name)")]), Reply(text="done"))
    session = make_session(server, repo, monkeypatch, WAIT, f"lsp.{name}.disabled=false")
    try:
        await collect_events(session, "edit main.py")
    finally:
        await session.aclose()
    output = tool_messages(server.requests[1])[0]
    assert "brand_new_name" in output and f"reported by {name}" in output
    assert "already_broken" not in output


async def test_the_lsp_tool_finds_a_definition_in_another_file(server, repo, monkeypatch):
    need("basedpyright-langserver")
    server.script(
        Reply(text="looking"),  # the first request: is the tool listed once the server runs?
        Reply(
            tool_calls=[ToolCall("lsp", {"operation": "definition", "path": "main.py", "line": 3, "symbol": "helper"})]
        ),
        Reply(text="found it"),
    )
    session = make_session(server, repo, monkeypatch, WAIT)
    try:
        await collect_events(session, "hello")
        await collect_events(session, "where is helper defined?")
    finally:
        await session.aclose()
    assert "lsp" in [tool["function"]["name"] for tool in server.requests[0].body["tools"]]
    assert tool_messages(server.requests[2])[0].startswith("util.py:1:5: def helper(x: int) -> int:")


def test_without_a_server_the_lsp_tool_is_not_listed(server, tmp_path, monkeypatch):
    root = git_init(tmp_path / "plain")
    session = make_session(server, root, monkeypatch, "lsp=false")
    assert "lsp" not in [spec.name for spec in session.tool_specs()]


@pytest.mark.parametrize("mode", ["hang", "silent", "crash"])
async def test_a_server_that_hangs_or_crashes_costs_at_most_the_wait(server, repo, monkeypatch, mode):
    trace = repo.parent / "trace.txt"
    monkeypatch.setenv("LSP_TRACE", str(trace))
    server.script(
        Reply(tool_calls=[patch_main("print(brand_new_name)")]),
        Reply(tool_calls=[patch_main("print(other_name)")]),
        Reply(text="done"),
    )
    table = f'lsp.bad.command=["{sys.executable}", "{MISBEHAVING}", "{mode}"]'
    session = make_session(
        server,
        repo,
        monkeypatch,
        "lsp_wait_ms=1500",
        table,
        'lsp.bad.languages=["python"]',
        "lsp.basedpyright.disabled=true",
    )
    started = time.monotonic()
    try:
        events = await collect_events(session, "edit main.py")
    finally:
        await session.aclose()
    assert time.monotonic() - started < 2 * 1.5 + 10  # two edits, each waiting 1.5 s at most (+ start-up)
    assert isinstance(events[-1], ev.TurnComplete)
    outputs = tool_messages(server.requests[2])
    assert all(output.startswith("Success") and "<diagnostics>" not in output for output in outputs), outputs
    if mode == "crash":  # started again for the second edit, and it was told about the file again
        assert trace.read_text().count("initialize\n") == 2
        assert trace.read_text().count("textDocument/didOpen\n") == 2


async def test_servers_end_with_the_session(server, repo, monkeypatch):
    need("basedpyright-langserver")
    server.script(Reply(tool_calls=[patch_main("x = 1")]), Reply(text="done"))
    session = make_session(server, repo, monkeypatch, WAIT)
    await collect_events(session, "edit")
    servers = session.checks.lsp.running
    assert servers and all(server.pid for server in servers)
    pids = [pid for server in servers for pid in descendants(server.pid)]
    assert pids and all(alive(pid) for pid in pids)
    await session.aclose()
    assert all([await gone(pid, within=10) for pid in pids])


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (by /proc's parent links)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [pid], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def test_exec_json_has_an_item_per_diagnostics_batch(server, repo):
    need("basedpyright-langserver")
    server.script(Reply(tool_calls=[patch_main("print(brand_new_name)")]), Reply(text="done"))
    flags = ["--provider", "openai-chat", "-m", "m", "-c", WAIT, "-c", "test_command='exit 0'"]
    result = run_agent(
        ["exec", "--json", *flags, "edit"],
        cwd=repo,
        env={**provider_env(server, "openai-chat"), "AGENT_LSP_AUTODETECT": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    items = [json.loads(line).get("item", {}) for line in result.stdout.splitlines()]
    [batch] = [item for item in items if item.get("type") == "diagnostics"]
    assert batch["servers"] == ["basedpyright"] and batch["errors"] == 1 and "brand_new_name" in batch["diagnostics"][0]
    [check] = [item for item in items if item.get("type") == "project_check"]
    assert check["kind"] == "test" and check["status"] == "passed" and check["sent_to_model"] is False


async def test_two_servers_for_one_language_each_report_once(server, repo, monkeypatch):
    need("pylsp")
    need("ruff")
    server.script(
        Reply(tool_calls=[patch_main("print(brand_new_name)")]),
        Reply(tool_calls=[patch_main("value = 2")]),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, WAIT, "lsp.pylsp.disabled=false", "lsp.ruff.disabled=false")
    try:
        await collect_events(session, "edit main.py")
    finally:
        await session.aclose()
    first, second = tool_messages(server.requests[1])[0], tool_messages(server.requests[2])[1]
    assert "Undefined name `brand_new_name` [F821]" in first and "undefined name 'brand_new_name'" in first
    assert "reported by pylsp, ruff" in first and "already_broken" not in first.lower()
    assert "<diagnostics>" not in second


async def test_what_a_server_leaves_running_ends_with_it_and_the_agent_lives_on(server, repo, monkeypatch):
    """The supervisor signals its own process group when it cleans up: the server runs in a group
    of its own, or that signal would reach the agent."""
    server.script(Reply(tool_calls=[patch_main("x = 1")]), Reply(text="done"))
    table = f'lsp.bad.command=["{sys.executable}", "{MISBEHAVING}", "forks"]'
    session = make_session(
        server,
        repo,
        monkeypatch,
        "lsp_wait_ms=1500",
        table,
        'lsp.bad.languages=["python"]',
        "lsp.basedpyright.disabled=true",
    )
    await collect_events(session, "edit")
    sleeper = await started("sleep", "300.0123")
    [bad] = session.checks.lsp.running
    assert os.getpgid(bad.pid) != os.getpgid(0)  # its supervisor's clean-up signals its group, not ours
    await session.aclose()
    assert await gone(sleeper, within=10)


async def test_the_lsp_tool_keeps_to_the_read_deny_rules(server, repo, monkeypatch):
    need("basedpyright-langserver")
    server.script(
        Reply(
            tool_calls=[
                ToolCall("lsp", {"operation": "definition", "path": "main.py", "line": 3, "symbol": "helper"}),
                ToolCall("lsp", {"operation": "document_symbols", "path": "util.py"}),
            ]
        ),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, WAIT, 'permissions.deny=["Read(./util.py)"]')
    try:
        await collect_events(session, "where is helper?")
    finally:
        await session.aclose()
    definition, symbols = tool_messages(server.requests[1])
    assert definition == "no results" and "util.py is hidden by a Read deny rule" in symbols


async def test_references_hover_and_symbols(server, repo, monkeypatch):
    need("basedpyright-langserver")
    at_helper = {"path": "main.py", "line": 3, "symbol": "helper"}
    server.script(
        Reply(
            tool_calls=[
                ToolCall("lsp", {"operation": "references", **at_helper}),
                ToolCall("lsp", {"operation": "hover", **at_helper}),
                ToolCall("lsp", {"operation": "document_symbols", "path": "util.py"}),
                ToolCall("lsp", {"operation": "workspace_symbols", "path": "main.py", "query": "helper"}),
            ]
        ),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, WAIT)
    try:
        await collect_events(session, "tell me about helper")
    finally:
        await session.aclose()
    references, hover, document, workspace = tool_messages(server.requests[1])
    assert "util.py:1:5: def helper" in references and "main.py:3:7: print(helper(1))" in references
    assert "def helper(x: int) -> int" in hover
    assert document.startswith("function helper  (util.py:1)")
    assert "function helper  (util.py:1)" in workspace


async def test_a_file_the_lsp_tool_opened_keeps_its_old_errors_out_of_the_next_edit(server, repo, monkeypatch):
    need("basedpyright-langserver")
    server.script(
        Reply(tool_calls=[ToolCall("lsp", {"operation": "hover", "path": "main.py", "line": 3, "symbol": "helper"})]),
        Reply(tool_calls=[patch_main("print(brand_new_name)")]),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, WAIT)
    try:
        await collect_events(session, "look, then edit")
    finally:
        await session.aclose()
    edit = tool_messages(server.requests[2])[1]
    assert "brand_new_name" in edit and "already_broken" not in edit


async def test_a_server_that_never_reports_is_restarted_and_then_left_out(server, repo, monkeypatch):
    trace = repo.parent / "trace.txt"
    monkeypatch.setenv("LSP_TRACE", str(trace))
    edits = 12
    server.script(*[Reply(tool_calls=[patch_main(f"value = {n}")]) for n in range(edits)], Reply(text="done"))
    table = f'lsp.bad.command=["{sys.executable}", "{MISBEHAVING}", "hang"]'
    session = make_session(
        server,
        repo,
        monkeypatch,
        "lsp_wait_ms=400",
        table,
        'lsp.bad.languages=["python"]',
        "lsp.basedpyright.disabled=true",
    )
    try:
        events = await collect_events(session, "edit main.py")
        status = "\n".join(session.checks.status_lines())
    finally:
        await session.aclose()
    assert trace.read_text().count("initialize\n") == 3  # started, and started again twice
    durations = [event.duration for event in events if isinstance(event, ev.ToolCallEnd)]
    assert len(durations) == edits and all(d < 0.3 for d in durations[-2:])  # then no edit waits for it
    assert "failed: published no diagnostics for 3 edits in a row, restarted 2x" in status

"""Type-aware reading through a real Session and the fake server: what the model receives."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from agent_cli.session.session import Session
from tests import session_helpers
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events


def make_session(server, cwd: Path, monkeypatch, *overrides: str) -> Session:
    monkeypatch.setenv("AGENT_HOME", str(cwd / "home"))
    return session_helpers.make_session(server, cwd, monkeypatch, *overrides, interactive=True)


async def test_the_model_reads_a_100000_row_csv_as_its_shape(server, tmp_path, monkeypatch):
    with (tmp_path / "orders.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "total"])
        writer.writerows([row, row * 2] for row in range(1, 100_001))
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "orders.csv"})]), Reply(text="done"))
    session = make_session(server, tmp_path, monkeypatch, "read_file.table_head_rows=5")
    await collect_events(session, "how many orders?")
    output = next(m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool")
    assert output.splitlines()[:4] == [
        "CSV: 100,000 rows + header, 2 columns, delimiter ','",
        "header\tid,total",
        "1\t1,2",
        "2\t2,4",
    ]
    assert output.endswith(
        "100000\t100000,200000\n[rows 1-5 and 99,991-100,000 of 100,000 shown; use offset/limit for others]"
    )
    schema = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "read_file")
    assert set(schema["function"]["parameters"]["properties"]) == {"path", "offset", "limit", "pages"}


async def test_an_attached_json_document_arrives_cut_to_its_structure(server, tmp_path, monkeypatch):
    document = {"users": [{"id": i, "roles": ["a", "b"]} for i in range(5_000)], "version": 3}
    (tmp_path / "users.json").write_text(json.dumps(document, indent=2))
    server.script(Reply(text="seen"))
    session = make_session(server, tmp_path, monkeypatch, "tool_output_token_limit=2000")
    await collect_events(session, "summarize @users.json")
    sent = server.requests[0].body["messages"][-1]["content"]
    attached = sent.split('<attached_file path="users.json" type="JSON">\n', 1)[1]
    assert '"… 4,950 more items"' in attached and '"version": 3' in attached
    assert "[structure cut: left out 4,950 array items after the first 50]\n</attached_file>" in attached

"""A session file with a corrupt line in the middle (issue 27, item 12): resuming it says how to
repair it, `agent sessions repair` keeps the lines that parse, and the session resumes from them.
Real `agent exec` processes against the fake server."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply


def exec_agent(server, cwd: Path, *args: str):
    return run_agent(
        ["exec", *args[:-1], "--provider", "openai-chat", "-m", "m", args[-1]],
        cwd=cwd,
        env=provider_env(server, "openai-chat"),
    )


def user_texts(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user" and isinstance(m["content"], str)]


def test_a_corrupt_middle_line_is_repaired_and_the_session_resumes(server, tmp_path, isolated_home):
    server.script(Reply(text="first answer"), Reply(text="second answer"))
    assert exec_agent(server, tmp_path, "FIRST-PROMPT").returncode == 0
    assert exec_agent(server, tmp_path, "resume", "--last", "SECOND-PROMPT").returncode == 0
    [path] = list((isolated_home / "sessions").rglob("*.jsonl"))
    lines = path.read_bytes().split(b"\n")
    middle = next(i for i, line in enumerate(lines) if b"first answer" in line)
    lines[middle] = lines[middle][: len(lines[middle]) // 2] + b"\xff garbage"  # a damaged block
    path.write_bytes(b"\n".join(lines))

    refused = exec_agent(server, tmp_path, "resume", "--last", "THIRD-PROMPT")
    assert refused.returncode == 2
    assert f"line {middle + 1} is corrupt" in refused.stderr
    assert f"`agent sessions repair {path}`" in refused.stderr
    assert "Traceback" not in refused.stderr

    repaired = run_agent(["sessions", "repair", "--last"], cwd=tmp_path)
    assert repaired.returncode == 0, repaired.stderr
    assert f"left out 1 line(s) that do not parse (line {middle + 1})" in repaired.stdout
    [backup] = list(path.parent.glob(path.name + ".corrupt-*"))
    assert b"\xff garbage" in backup.read_bytes()  # the original is kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(backup.stat().st_mode) == 0o600

    server.script(Reply(text="third answer"))
    resumed = exec_agent(server, tmp_path, "resume", "--last", "THIRD-PROMPT")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "third answer\n"
    sent = user_texts(server.requests[-1])
    assert "FIRST-PROMPT" in sent and "SECOND-PROMPT" in sent and "THIRD-PROMPT" in sent

    again = run_agent(["sessions", "repair", path.stem], cwd=tmp_path)
    assert again.returncode == 0 and "nothing to repair" in again.stdout


def test_repair_refuses_a_file_that_is_no_session(tmp_path):
    bogus = tmp_path / "notes.jsonl"
    bogus.write_text("not json at all\n{}\n")
    result = run_agent(["sessions", "repair", str(bogus)], cwd=tmp_path)
    assert result.returncode == 2
    assert "not a session file to repair" in result.stderr
    assert bogus.read_text() == "not json at all\n{}\n"

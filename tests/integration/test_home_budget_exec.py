"""Bounded disk (issue 33, item 7): a command printing far more than a spill file may hold leaves a
capped file (head and tail around a marker), and what the agent keeps under its home stays
within `home_budget_mb`, the oldest removed first; /status shows the use."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent_cli import home_budget
from agent_cli.tools.capture import SPILL_HEAD_CAP, SPILL_TAIL_CAP
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

MB = 1024 * 1024
PRINT = "python3 -c \"import sys; w = sys.stdout.buffer.write; w(b'FIRST\\n'); [w(b'x' * 1048575 + b'\\n') for _ in range(40)]; w(b'LAST\\n')\""


def old_file(path: Path, size: int, days: float) -> Path:
    """A sparse file of ``size`` bytes last changed ``days`` ago (no disk used)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    stamp = time.time() - days * 86_400
    os.utime(path, (stamp, stamp))
    return path


def test_spills_are_capped_and_the_home_keeps_to_its_budget(server, tmp_path, isolated_home):
    home = isolated_home
    (home / "config.toml").write_text("home_budget_mb = 100\n")
    oldest = old_file(home / "tool-outputs" / "old-3.log", 45 * MB, 3)
    older = old_file(home / "sessions" / "2020" / "01" / "02" / "000000-old.jsonl", 45 * MB, 2)
    old = old_file(home / "checkpoints" / "repo-0123.git" / "objects" / "pack" / "p.pack", 45 * MB, 1)
    os.utime(old.parents[2], (time.time() - 86_400,) * 2)
    os.utime(old.parents[1], (time.time() - 86_400,) * 2)
    os.utime(old.parent, (time.time() - 86_400,) * 2)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": PRINT})]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": "none"}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "print"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    spills = [p for p in (home / "tool-outputs").iterdir() if p != oldest]
    [spill] = spills
    data = spill.read_bytes()
    assert len(data) <= SPILL_HEAD_CAP + SPILL_TAIL_CAP + 200  # not 40 MB
    assert data.startswith(b"FIRST\n") and data.endswith(b"LAST\n") and b"bytes left out here" in data
    assert not oldest.exists() and not older.exists()  # removed oldest first until it fit...
    assert old.exists()  # ...and no further
    assert home_budget.usage(home) <= 100 * MB
    status = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "/status"], cwd=tmp_path, env=env)
    [row] = [line for line in status.stderr.splitlines() if "home_budget_mb" in line]
    assert "of 100 MB" in row

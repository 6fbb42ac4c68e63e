"""A command's own writes ask like the model's do.

``/export FILE``, ``/init``'s ``AGENTS.md`` and ``/worktree NAME``'s new worktree write files the
way an ``apply_patch`` of the same paths would, so they get the same permission decision: the
rules (``Edit(…)`` deny and ask rules), the approval policy, the sandbox's writable roots and
protected paths (by each file's resolved path: a symlink leading out is a write out), and the
question where one is asked (the TUI's dialog, ACP's permission request, the Claude SDK host's
``can_use_tool``); ``agent exec`` refuses what it would have to ask. The front ends see the write
as an ``apply_patch`` call, as they see a ``!command`` as a ``shell`` call (shell_runner.py).

Audited: the other built-in commands write nothing in the user's folders. ``/memory``, ``/mcp
login|logout``, ``/rename``, ``/fork``, ``/compact`` and ``/logout`` write only the agent's own
storage under its home; ``/undo`` and ``/rewind`` put back files the session's turns changed (each
change was decided when it was made) after showing the diff; ``/lint`` and ``/test`` run the
configured commands in the sandbox; ``!command`` and a command file's ``!`cmd``` go through the
shell decision.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.session.session import Emit, Session
from agent_cli.tools.apply_patch import patch_target

PREVIEW_LINES = 40  # of a file's new content, in the question
_ids = itertools.count(1)


def write_patch(writes: Sequence[tuple[Path, str]]) -> str:
    """The writes as the patch the approver sees: each file added (replaced when it exists), its
    first lines shown."""
    lines = ["*** Begin Patch"]
    for path, content in writes:
        if os.path.lexists(path):
            lines.append(f"*** Delete File: {path}")
        lines.append(f"*** Add File: {path}")
        body = content.splitlines()
        lines += ["+" + line for line in body[:PREVIEW_LINES]]
        if len(body) > PREVIEW_LINES:
            lines.append(f"+… ({len(body) - PREVIEW_LINES} more lines)")
    lines.append("*** End Patch")
    return "\n".join(lines)


async def approve_writes(session: Session, emit: Emit, what: str, writes: Sequence[tuple[Path, str]]) -> list[Path]:
    """Decide the writes as a model's ``apply_patch`` of them; returns where each goes (resolved,
    as checked). Raises InputError with the reason when they may not happen."""
    cwd = Path(session.config.cwd)
    targets = [patch_target(cwd, str(path)) for path, _ in writes]
    call_id = f"user-write-{next(_ids)}"
    args = {"patch": write_patch([(target, content) for target, (_, content) in zip(targets, writes, strict=True)])}
    emit(ev.ToolCallBegin(call_id, "apply_patch", args))
    started = time.monotonic()
    approvals = session.approvals
    try:
        denial = await approvals.check(call_id, "apply_patch", args, emit)
        if denial is None and call_id in approvals.updated_arguments:
            denial = f"the approver changed the write; {what} writes its own content, approved as it is or not at all"
    finally:
        approvals.end_call(call_id)
    output = denial or f"{what}: approved"
    emit(ev.ToolCallEnd(call_id, "apply_patch", args, output, denial is None, time.monotonic() - started))
    if denial is not None:
        raise InputError(f"{what} was not done: {denial}")
    return targets


def write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (resolved when it was approved), never through a symbolic link
    put there since. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)

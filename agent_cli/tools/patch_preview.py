"""What an apply_patch call changes, as unified diffs, without writing anything.

For showing a patch to a person: the approval prompt (before it runs) reads the files and diffs
the result with line numbers, as the transcript shows an applied patch; a replayed session whose
files have moved on shows the patch's own hunks in the same shape.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from agent_cli.events import FileChange
from agent_cli.tools.apply_patch import _Planner
from agent_cli.tools.base import ToolError
from agent_cli.tools.patch_parser import AddFile, DeleteFile, parse_patch


def preview_changes(patch: str, cwd: Path) -> tuple[FileChange, ...]:
    """The changes ``patch`` would make in ``cwd`` now; the patch's own hunks when it no longer applies."""
    try:
        planner = _Planner(SimpleNamespace(cwd=cwd, writable_roots=(), sandbox=None))  # type: ignore[arg-type]
        for op in parse_patch(patch):
            planner.apply(op)
        return tuple(planner.plan.changes)
    except (ToolError, OSError, ValueError):
        return patch_changes(patch)


def patch_changes(patch: str) -> tuple[FileChange, ...]:
    """The patch's operations as diffs built from its hunks alone (no line numbers)."""
    try:
        ops = parse_patch(patch)
    except (ToolError, ValueError):
        return ()
    changes: list[FileChange] = []
    for op in ops:
        if isinstance(op, AddFile):
            body = "".join(f"+{line}\n" for line in op.content.splitlines())
            changes.append(FileChange(op.path, "add", None, f"--- /dev/null\n+++ b/{op.path}\n{body}"))
        elif isinstance(op, DeleteFile):
            changes.append(FileChange(op.path, "delete", None, f"--- a/{op.path}\n+++ /dev/null\n"))
        else:
            lines = [f"--- a/{op.path}", f"+++ b/{op.move_to or op.path}"]
            for hunk in op.hunks:
                lines.append(f"@@ {hunk.context}" if hunk.context else "@@")
                lines += [f"{mark}{text}" for mark, text in hunk.lines]
            changes.append(FileChange(op.path, "update", op.move_to, "\n".join(lines) + "\n"))
    return tuple(changes)

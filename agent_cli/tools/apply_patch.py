"""The ``apply_patch`` tool: add, delete, update and move files atomically.

Every operation is validated and every new content computed before anything is written; a
write failing midway restores what was already written. With ``ctx.writable_roots`` set, a
path that resolves (``..`` and symlinks included) outside them is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.events import FileChange
from agent_cli.models.base import ToolSpec
from agent_cli.sandbox.policy import is_within
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import str_arg
from agent_cli.tools.patch_apply import apply_hunks
from agent_cli.tools.patch_parser import AddFile, DeleteFile, Operation, UpdateFile, parse_patch

if TYPE_CHECKING:
    from agent_cli.tools.editor_files import EditorFiles


def _current_umask() -> int:
    try:  # Linux tells us without changing it
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_NEW_FILE_MODE = 0o666 & ~_current_umask()

SPEC = ToolSpec(
    name="apply_patch",
    description=(
        "Edit files with a patch. Format:\n*** Begin Patch\n*** Add File: path\n+line\n"
        "*** Delete File: path\n*** Update File: path\n*** Move to: new_path   (optional)\n"
        "@@ optional line to locate the hunk (e.g. a def)\n context line\n-removed line\n"
        "+added line\n*** End Patch\nGive about 3 context lines around each change; hunks go in "
        "file order. All-or-nothing: if any hunk fails to match, no file changes."
    ),
    parameters={
        "type": "object",
        "properties": {"patch": {"type": "string", "description": "The whole patch, Begin to End."}},
        "required": ["patch"],
        "additionalProperties": False,
    },
)


def patch_target(cwd: Path, raw: str, *, keep_link: bool = False) -> Path:
    """Where a patch path points. ``keep_link``: a symlink itself (deleting it removes the link)."""
    lexical = cwd / Path(raw).expanduser()
    if keep_link and lexical.is_symlink():
        return lexical.parent.resolve() / lexical.name
    return lexical.resolve()


@dataclass
class _Plan:
    """The new state of every touched file; None means deleted."""

    contents: dict[Path, bytes | None] = field(default_factory=dict)
    originals: dict[Path, bytes | None] = field(default_factory=dict)
    modes: dict[Path, int | None] = field(default_factory=dict)
    changes: list[FileChange] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


class _Planner:
    def __init__(self, ctx: ToolContext):
        self.ctx = ctx
        self.plan = _Plan()
        self.roots = [(ctx.cwd / root).resolve() for root in ctx.writable_roots]

    def target(self, raw: str, *, keep_link: bool = False) -> Path:
        path = patch_target(self.ctx.cwd, raw, keep_link=keep_link)
        if self.ctx.sandbox is not None and (denied := self.ctx.sandbox.write_denial(path)):
            raise ToolError(f"{raw}: {denied}")  # sandbox.py: read-only mode, .git, writable roots
        if self.roots and not any(is_within(path, root) for root in self.roots):
            allowed = ", ".join(str(root) for root in self.roots)
            raise ToolError(f"{raw} resolves to {path}, outside the writable roots ({allowed})")
        if path.is_dir() and not path.is_symlink():
            raise ToolError(f"{raw} is a directory")
        return path

    def current(self, path: Path) -> bytes | None:
        if path in self.plan.contents:
            return self.plan.contents[path]
        try:
            data = path.read_bytes() if path.exists() or path.is_symlink() else None
        except OSError as exc:
            raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from None
        self.plan.originals[path] = data
        self.plan.modes[path] = _mode(path) if data is not None else None
        return data

    def stage(self, path: Path, data: bytes | None) -> None:
        self.current(path)  # remember the original first
        self.plan.contents[path] = data

    def apply(self, op: Operation) -> None:
        if isinstance(op, AddFile):
            path = self.target(op.path)
            before = self.current(path)
            new = op.content.encode("utf-8", "surrogateescape")
            self.stage(path, new)
            self._record(op.path, "add" if before is None else "update", before, new)
            self.plan.summary.append(f"A {op.path}")
        elif isinstance(op, DeleteFile):
            path = self.target(op.path, keep_link=True)
            before = self.current(path)
            if before is None:
                raise ToolError(f"cannot delete {op.path}: file not found")
            self.stage(path, None)
            self._record(op.path, "delete", before, None)
            self.plan.summary.append(f"D {op.path}")
        else:
            self._update(op)

    def _update(self, op: UpdateFile) -> None:
        path = self.target(op.path)
        before = self.current(path)
        if before is None:
            raise ToolError(f"cannot update {op.path}: file not found")
        if b"\0" in before[:8192]:
            raise ToolError(f"cannot update {op.path}: it is a binary file")
        text = before.decode("utf-8", "surrogateescape")
        new = apply_hunks(op.path, text, op.hunks).encode("utf-8", "surrogateescape") if op.hunks else before
        if op.move_to is None:
            self.stage(path, new)
            self._record(op.path, "update", before, new)
            self.plan.summary.append(f"M {op.path}")
            return
        dest = self.target(op.move_to)
        if dest != path and self.current(dest) is not None:
            raise ToolError(f"cannot move {op.path} to {op.move_to}: the destination exists")
        self.stage(path, None)
        self.stage(dest, new)
        self._record(op.path, "update", before, new, move_to=op.move_to)
        self.plan.summary.append(f"M {op.path} -> {op.move_to}")

    def _record(
        self, raw: str, kind: str, before: bytes | None, after: bytes | None, move_to: str | None = None
    ) -> None:
        diff = unified_diff(raw, move_to or raw, before, after)
        self.plan.changes.append(FileChange(raw, kind, move_to, diff))  # type: ignore[arg-type]


def unified_diff(old_name: str, new_name: str, before: bytes | None, after: bytes | None) -> str:
    import difflib

    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        text = data.decode("utf-8", "replace")
        parts = text.split("\n")
        out = [part + "\n" for part in parts[:-1]]
        if parts[-1]:
            out.append(parts[-1] + "\n\\ No newline at end of file\n")
        return out

    return "".join(
        difflib.unified_diff(
            lines(before),
            lines(after),
            fromfile="/dev/null" if before is None else f"a/{old_name}",
            tofile="/dev/null" if after is None else f"b/{new_name}",
        )
    )


async def editor_buffers(planner: _Planner, ops: list[Operation], editor: EditorFiles) -> None:
    """Patch what the editor holds for the files to update (its buffers may be unsaved)."""
    for op in ops:
        if isinstance(op, UpdateFile):
            path = planner.target(op.path)
            if path.is_file() and (text := await editor.read_text(path)) is not None:
                planner.current(path)  # the disk's bytes and mode stay the originals to roll back to
                planner.plan.originals[path] = text.encode("utf-8", "surrogateescape")
                planner.plan.contents[path] = planner.plan.originals[path]


async def write_through_editor(plan: _Plan, editor: EditorFiles) -> None:
    """New and changed files go to the editor's buffers; what it took is not written again."""
    for path, data in list(plan.contents.items()):
        if data is not None and data != plan.originals.get(path):
            if await editor.write_text(path, data.decode("utf-8", "surrogateescape")):
                plan.originals[path] = data  # written: write_plan skips it


def write_plan(plan: _Plan) -> None:
    """Write every staged file; on failure restore the ones already written and re-raise."""
    done: list[Path] = []
    created_dirs: list[Path] = []
    try:
        for path, data in plan.contents.items():
            original = plan.originals.get(path)
            if data == original:
                continue
            if data is None:
                path.unlink()
            else:
                created_dirs += _make_parents(path.parent)
                _atomic_write(path, data, plan.modes.get(path))
            done.append(path)
    except OSError:
        for path in reversed(done):
            with contextlib.suppress(OSError):
                original = plan.originals.get(path)
                if original is None:
                    path.unlink()
                else:
                    _atomic_write(path, original, plan.modes.get(path))
        for directory in reversed(created_dirs):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def _make_parents(directory: Path) -> list[Path]:
    missing = [d for d in [directory, *directory.parents] if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))  # outermost first


def _atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode if mode is not None else _NEW_FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class ApplyPatchTool(Tool):
    spec = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ops = parse_patch(str_arg(args, "patch"))
        planner = _Planner(ctx)
        if ctx.editor is not None:
            await editor_buffers(planner, ops, ctx.editor)
        for op in ops:
            planner.apply(op)
        try:
            if ctx.editor is not None:
                await write_through_editor(planner.plan, ctx.editor)
            write_plan(planner.plan)
        except OSError as exc:
            raise ToolError(f"writing failed, changes rolled back: {exc}") from None
        summary = "Success. Updated the following files:\n" + "\n".join(planner.plan.summary)
        return ToolResult(summary, changes=tuple(planner.plan.changes))

"""apply_patch on real files: every operation, atomicity, line endings, fuzz, escapes."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from agent_cli.tools.apply_patch import ApplyPatchTool
from agent_cli.tools.base import ToolContext, ToolError


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data")


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


async def apply(ctx: ToolContext, text: str):
    return await ApplyPatchTool().run({"patch": text}, ctx)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_add_update_delete(ctx, tmp_path):
    (tmp_path / "old.txt").write_text("bye\n")
    (tmp_path / "m.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await apply(
        ctx,
        patch(
            "*** Add File: pkg/new.txt",
            "+hello",
            "+world",
            "*** Delete File: old.txt",
            "*** Update File: m.py",
            "@@",
            " a = 1",
            "-b = 2",
            "+b = 20",
            " c = 3",
        ),  # fmt: skip
    )
    assert (tmp_path / "pkg/new.txt").read_text() == "hello\nworld\n"
    assert not (tmp_path / "old.txt").exists()
    assert (tmp_path / "m.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert result.output == "Success. Updated the following files:\nA pkg/new.txt\nD old.txt\nM m.py"
    kinds = [(c.path, c.kind, c.move_to) for c in result.changes]
    assert kinds == [("pkg/new.txt", "add", None), ("old.txt", "delete", None), ("m.py", "update", None)]
    assert "-b = 2\n+b = 20\n" in result.changes[2].diff
    assert result.changes[2].diff.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "+hello\n" in result.changes[0].diff


async def test_move_with_edit(ctx, tmp_path):
    (tmp_path / "src.txt").write_text("one\ntwo\n")
    result = await apply(ctx, patch("*** Update File: src.txt", "*** Move to: dst/renamed.txt", "@@", "-two", "+TWO"))
    assert not (tmp_path / "src.txt").exists()
    assert (tmp_path / "dst/renamed.txt").read_text() == "one\nTWO\n"
    assert result.changes[0].move_to == "dst/renamed.txt"
    assert result.output.endswith("M src.txt -> dst/renamed.txt")


async def test_move_onto_existing_file_refused(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    with pytest.raises(ToolError, match="destination exists"):
        await apply(ctx, patch("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a", "+A"))
    assert (tmp_path / "a.txt").read_text() == "a\n"


async def test_multiple_hunks_with_context_anchor(ctx, tmp_path):
    lines = [f"line {i}" for i in range(1, 31)]
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    await apply(
        ctx,
        patch(
            "*** Update File: f.txt",
            "@@ line 3",
            " line 4",
            "-line 5",
            "+five",
            "@@ line 20",
            " line 21",
            "+after 21",
            " line 22",
            "@@",
            " line 29",
            "-line 30",
            "*** End of File",
        ),  # fmt: skip
    )
    expected = lines[:4] + ["five"] + lines[5:21] + ["after 21"] + lines[21:29]
    assert (tmp_path / "f.txt").read_text() == "\n".join(expected) + "\n"


async def test_failing_hunk_leaves_every_file_untouched(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("keep a\n")
    (tmp_path / "b.txt").write_text("keep b\n")
    (tmp_path / "c.txt").write_text("x\ny\nz\n")
    before = snapshot(tmp_path)
    bad = patch(
        "*** Update File: a.txt", "@@", "-keep a", "+changed a",
        "*** Add File: new.txt", "+new",
        "*** Delete File: b.txt",
        "*** Update File: c.txt", "@@", " x", "-not there", "+nope", " z",
    )  # fmt: skip
    with pytest.raises(ToolError) as err:
        await apply(ctx, bad)
    assert snapshot(tmp_path) == before
    message = str(err.value)
    assert "c.txt: hunk 1 does not match" in message
    assert "| x\n| not there\n| z" in message  # the lines it expected
    assert "start at line 1:\n| x\n| y\n| z" in message  # and what is there


async def test_write_failure_midway_restores_written_files(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("old\n")
    (tmp_path / "blocker").write_text("a file where a directory is needed\n")
    before = snapshot(tmp_path)
    with pytest.raises(ToolError, match="writing failed"):
        await apply(ctx, patch("*** Update File: a.txt", "@@", "-old", "+new", "*** Add File: blocker/x.txt", "+x"))
    assert snapshot(tmp_path) == before


async def test_crlf_and_missing_final_newline_preserved(ctx, tmp_path):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree")
    await apply(ctx, patch("*** Update File: w.txt", "@@", " one", "-two", "+TWO", "+2.5", " three"))
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\n2.5\r\nthree"


async def test_trailing_whitespace_tolerated_and_context_kept(ctx, tmp_path):
    (tmp_path / "t.py").write_text("def f():   \n    x = 1\t\n    return x\n")
    await apply(ctx, patch("*** Update File: t.py", "@@", " def f():", "-    x = 1", "+    x = 2", "     return x"))
    assert (tmp_path / "t.py").read_text() == "def f():   \n    x = 2\n    return x\n"


async def test_mode_preserved(ctx, tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("echo a\n")
    script.chmod(0o755)
    await apply(ctx, patch("*** Update File: run.sh", "@@", "-echo a", "+echo b"))
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_escapes_outside_writable_roots_refused(tmp_path):
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "target.txt").write_text("safe\n")
    (work / "link").symlink_to(outside)
    (work / "inside.txt").write_text("in\n")
    ctx = ToolContext(cwd=work, data_dir=tmp_path / "data", writable_roots=(work,))
    for path in ["../outside/target.txt", "link/target.txt", str(outside / "target.txt")]:
        with pytest.raises(ToolError, match="outside the writable roots"):
            await apply(ctx, patch(f"*** Update File: {path}", "@@", "-safe", "+pwned"))
    with pytest.raises(ToolError, match="outside the writable roots"):
        await apply(ctx, patch("*** Add File: link/new.txt", "+x"))
    assert (outside / "target.txt").read_text() == "safe\n"
    assert not (outside / "new.txt").exists()
    await apply(ctx, patch("*** Update File: inside.txt", "@@", "-in", "+ok"))
    assert (work / "inside.txt").read_text() == "ok\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Update File: a\n@@\n-x\n+y\n*** End Patch", "must start with"),
        ("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n", "must end with"),
        ("*** Begin Patch\n*** End Patch", "no file operations"),
        ("*** Begin Patch\n*** Update File: a.txt\n@@\n?x\n*** End Patch", "must start with ' ', '-' or '+'"),
        ("*** Begin Patch\n*** Add File: n.txt\nno plus\n*** End Patch", "must start with '+'"),
        ("*** Begin Patch\n*** Frobnicate: a\n*** End Patch", "expected '*** Add File: '"),
        ("*** Begin Patch\n*** Update File: missing.txt\n@@\n-x\n*** End Patch", "file not found"),
    ],
)
async def test_bad_patches_are_clear_errors(ctx, tmp_path, text, message):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match=re.escape(message)):
        await apply(ctx, text)
    assert (tmp_path / "a.txt").read_text() == "x\n"
    assert os.listdir(tmp_path) == ["a.txt"]

"""read_file on real files: windows, long lines, binary, empty, missing, directories, huge files."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import pytest

from agent_cli.files.limits import ReadLimits
from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.read_file import ReadFileTool

LINE_WIDTH = ReadLimits().max_line_chars


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data")


async def read(ctx: ToolContext, path: str, **extra) -> str:
    return (await ReadFileTool().run({"path": path, **extra}, ctx)).output


async def test_whole_small_file_numbered_without_footer(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\r\ngamma")
    assert await read(ctx, "a.txt") == "1\talpha\n2\tbeta\n3\tgamma"


async def test_offset_and_limit_report_total_and_next_offset(ctx, tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await read(ctx, "n.txt", offset=10, limit=5)
    assert out.splitlines()[:5] == [f"{i}\tline {i}" for i in range(10, 15)]
    assert out.splitlines()[-1] == "[Lines 10-14 of 100; use offset=15 to continue]"
    tail = await read(ctx, str(tmp_path / "n.txt"), offset=98)
    assert tail == "98\tline 98\n99\tline 99\n100\tline 100\n[Lines 98-100 of 100]"


async def test_default_limit_is_2000_lines(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("x\n" * 2500)
    out = await read(ctx, "big.txt")
    assert out.count("\tx") == 2000
    assert out.endswith("[Lines 1-2000 of 2500; use offset=2001 to continue]")


async def test_output_budget_stops_early_with_a_note(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=100)
    (tmp_path / "w.txt").write_text(("y" * 50 + "\n") * 100)
    out = await read(ctx, "w.txt")
    last_shown = int(out.splitlines()[-2].split("\t")[0])
    assert out.endswith(
        f"[Lines 1-{last_shown} of 100 (output budget reached); use offset={last_shown + 1} to continue]"
    )
    assert len(out.encode()) <= 400


async def test_long_line_is_cut_with_marker(ctx, tmp_path):
    (tmp_path / "long.txt").write_text("short\n" + "é" * 100_000 + "\nend\n")
    lines = (await read(ctx, "long.txt")).splitlines()
    assert lines[0] == "1\tshort" and lines[2] == "3\tend"
    assert lines[1] == "2\t" + "é" * LINE_WIDTH + " …[line truncated; 100000 chars]"


async def test_huge_single_line_file_is_streamed(ctx, tmp_path):
    (tmp_path / "huge.txt").write_bytes(b"z" * 50_000_000 + b"\nlast\n")
    tracemalloc.start()
    out = await read(ctx, "huge.txt")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.splitlines()[1] == "2\tlast"
    assert peak < 5_000_000  # never holds the 50 MB line


async def test_empty_file(ctx, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    assert await read(ctx, "empty.txt") == "[empty.txt is empty]"


async def test_binary_files_refused_with_type_and_size(ctx, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"abc\0def" * 10)
    (tmp_path / "a.gz").write_bytes(gzip.compress(b"hello"))
    with pytest.raises(ToolError, match=r"binary data, 70 bytes"):
        await read(ctx, "blob.bin")
    with pytest.raises(ToolError, match=r"gzip archive"):
        await read(ctx, "a.gz")


async def test_missing_file_and_directory_errors(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="file not found: nope.txt"):
        await read(ctx, "nope.txt")
    with pytest.raises(ToolError, match="is a directory; use list_dir"):
        await read(ctx, "d")


async def test_offset_past_end_and_bad_offset(ctx, tmp_path):
    (tmp_path / "s.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=r"offset 5 is past the end of s.txt \(2 lines\)"):
        await read(ctx, "s.txt", offset=5)
    with pytest.raises(ToolError, match="offset must be an integer >= 1"):
        await read(ctx, "s.txt", offset=0)


async def test_text_that_is_not_utf8_is_read_as_latin1_with_a_note(ctx, tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert await read(ctx, "latin1.txt") == "1\tcafé\n[not valid UTF-8: decoded as Latin-1]"

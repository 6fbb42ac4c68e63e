"""grep: ripgrep and the Python walker give the same answers on the same tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.grep import GrepTool, find_rg, format_result, search

HAVE_RG = find_rg() is not None
BACKENDS = [False, pytest.param(True, marks=pytest.mark.skipif(not HAVE_RG, reason="no rg binary"))]


def write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, ".gitignore", "*.log\n!keep.log\nbuild/\n/secret.py\n")
    write(root, "a.py", "import os\nneedle = 1\n")
    write(root, "a/b.py", "def f():\n    return 'needle'\n")
    write(root, "a/.gitignore", "*.tmp\n")
    write(root, "a/x.tmp", "needle in tmp\n")
    write(root, "a/deeper/c.txt", "no match\nNEEDLE upper\nneedle lower\r\n")
    write(root, "build/out.py", "needle built\n")
    write(root, "debug.log", "needle log\n")
    write(root, "keep.log", "needle kept\n")
    write(root, "secret.py", "needle secret\n")
    write(root, "sub/secret.py", "needle not anchored\n")
    write(root, ".hidden/h.py", "needle hidden\n")
    write(root, ".git/config", "needle git\n")
    write(root, "image.bin", b"needle\0binary\n")
    write(root, "z.py", "x = 'needle' " + "w" * 400 + "\n")
    (root / "link.py").symlink_to(root / "a.py")
    return root


EXPECTED_ALL = [
    ".hidden/h.py:1:needle hidden",
    "a/b.py:2:    return 'needle'",
    "a/deeper/c.txt:3:needle lower",
    "a.py:2:needle = 1",
    "keep.log:1:needle kept",
    "sub/secret.py:1:needle not anchored",
    "z.py:1:x = 'needle' " + "w" * 287 + "…",
]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_search_honours_gitignore_and_order(tree, use_rg):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    result = await search(ctx, "needle", use_rg=use_rg)
    assert [m.render() for m in result.matches] == EXPECTED_ALL
    assert result.total == len(EXPECTED_ALL)


@pytest.mark.skipif(not HAVE_RG, reason="no rg binary")
@pytest.mark.parametrize(
    ("pattern", "path", "include"),
    [
        ("needle", ".", None),
        ("needle", "a", None),
        ("needle", "build", None),  # an ignored directory named explicitly is searched
        ("needle", "a/b.py", None),
        ("needle", ".", "*.py"),
        ("needle", ".", "*.{txt,log}"),
        ("(?i)NEEDLE", ".", None),
        (r"^\s+return", ".", None),
        ("lower$", ".", None),
        ("nothing-matches-this", ".", None),
    ],
)
async def test_rg_and_python_agree(tree, pattern, path, include):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    with_rg = await search(ctx, pattern, path, include, use_rg=True)
    without = await search(ctx, pattern, path, include, use_rg=False)
    assert with_rg == without


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_paths_relative_to_cwd_when_searching_a_subdirectory(tree, use_rg):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    result = await search(ctx, "needle", "a", use_rg=use_rg)
    assert [m.render() for m in result.matches] == ["a/b.py:2:    return 'needle'", "a/deeper/c.txt:3:needle lower"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_parent_gitignore_applies_below_search_root(tree, use_rg):
    ctx = ToolContext(cwd=tree / "a", data_dir=tree / "data")
    write(tree, "a/deeper/d.log", "needle")
    result = await search(ctx, "needle", use_rg=use_rg)
    assert [m.path for m in result.matches] == ["b.py", "deeper/c.txt"]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_bad_regex_is_a_clear_error(tree, use_rg):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    with pytest.raises(ToolError, match=r"invalid regex 'foo\(' *:"):
        await search(ctx, "foo(", use_rg=use_rg)


async def test_limit_note_counts_what_was_left_out(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    out = (await GrepTool().run({"pattern": "needle", "limit": 2}, ctx)).output
    lines = out.splitlines()
    assert lines[:2] == EXPECTED_ALL[:2]
    assert lines[2] == f"[{len(EXPECTED_ALL) - 2} more matches not shown (limit 2); narrow the pattern or path]"
    assert format_result(await search(ctx, "zzz-nothing"), 10) == "No matches found."


async def test_include_must_be_a_file_name_glob(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree / "data")
    with pytest.raises(ToolError, match="include matches file names only"):
        await search(ctx, "needle", include="a/*.py")
    with pytest.raises(ToolError, match="path not found"):
        await search(ctx, "needle", "missing-dir")

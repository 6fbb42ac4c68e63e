"""list_dir on a real tree with .gitignore, depth and limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.list_dir import ListDirTool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel in ["src/app/main.py", "src/util.py", "docs/index.md", "README.md", "build/x.o", "notes.log",
                ".env", ".git/HEAD", "src/app/deep/deeper.txt", "src/cache.tmp"]:  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src/.gitignore").write_text("*.tmp\n")
    (root / "link").symlink_to(root / "docs")
    return root


async def listing(ctx: ToolContext, path: str, **extra) -> str:
    return (await ListDirTool().run({"path": path, **extra}, ctx)).output


async def test_tree_respects_gitignore_marks_dirs_and_hides_git(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree.parent / "data")
    assert await listing(ctx, ".") == "\n".join(
        [
            f"{tree}/",
            "  docs/",
            "    index.md",
            "  src/",
            "    app/",
            "    .gitignore",
            "    util.py",
            "  .env",
            "  .gitignore",
            "  README.md",
            "  link@",
        ]
    )


async def test_depth_and_subdirectory(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree.parent / "data")
    out = await listing(ctx, "src", depth=3)
    assert out.splitlines() == [
        f"{tree}/src/",
        "  app/",
        "    deep/",
        "      deeper.txt",
        "    main.py",
        "  .gitignore",
        "  util.py",
    ]
    assert (await listing(ctx, "src", depth=1)).splitlines()[1:] == ["  app/", "  .gitignore", "  util.py"]


async def test_limit_keeps_shallow_entries_and_counts_the_rest(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree.parent / "data")
    out = await listing(ctx, ".", depth=3, limit=4)
    lines = out.splitlines()
    assert lines[1:5] == ["  docs/", "  src/", "  .env", "  .gitignore"]
    # depth 3 has 12 visible entries in total; 4 shown
    assert lines[-1] == "[8 more entries not shown; raise limit or list a subdirectory]"


async def test_errors(tree):
    ctx = ToolContext(cwd=tree, data_dir=tree.parent / "data")
    with pytest.raises(ToolError, match="directory not found"):
        await listing(ctx, "nope")
    with pytest.raises(ToolError, match="use read_file"):
        await listing(ctx, "README.md")
    with pytest.raises(ToolError, match="depth must be an integer >= 1"):
        await listing(ctx, ".", depth=0)
    (tree / "empty").mkdir()
    assert (await listing(ctx, "empty")).splitlines()[1] == "  (empty)"

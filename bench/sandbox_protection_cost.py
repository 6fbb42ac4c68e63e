"""What the protections of issue 33 (items 1-3) cost per sandboxed command, on a repository whose
node_modules holds 50,000 files (and one nested repository), with a husky hooks folder.

Measures, in this run: the first walk of the tree (once per session and root), the work added to
each command (the index refreshed by stat, git config read, dotfiles checked, the read-only mount
list), and `echo` through the shell tool in the sandbox with the protections and with them stubbed
out. Run: python bench/sandbox_protection_cost.py [--files N] [--commands N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.sandbox import guard as sandbox_guard  # noqa: E402
from agent_cli.sandbox import protected as sandbox_protected  # noqa: E402
from agent_cli.sandbox.policy import SandboxPolicy, detect_mechanism  # noqa: E402
from agent_cli.sandbox.repo_index import RECENT_S  # noqa: E402
from agent_cli.tools.base import ToolContext  # noqa: E402
from agent_cli.tools.shell import ShellTool  # noqa: E402

FILES_PER_PACKAGE = 10  # in lib/ and the package folder: ~ the files/folders ratio of a real node_modules


def make_tree(root: Path, files: int) -> tuple[int, int]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".husky"], check=True)
    (root / ".husky").mkdir()
    (root / ".husky" / "pre-commit").write_text("#!/bin/sh\nnpm test\n")
    modules = root / "node_modules"
    made = dirs = 0
    package = 0
    while made < files:
        folder = modules / f"@scope{package % 50}" / f"pkg{package}"
        (folder / "lib").mkdir(parents=True)
        dirs += 2
        for n in range(FILES_PER_PACKAGE):
            (folder / ("lib" if n % 2 else ".") / f"f{n}.js").write_text("x")
        made += FILES_PER_PACKAGE
        package += 1
    subprocess.run(["git", "init", "-q", str(modules / "@scope1" / "pkg1")], check=True)
    return made, dirs + 50


async def shell_ms(ctx: ToolContext, count: int) -> float:
    started = time.perf_counter()
    for n in range(count):
        result = await ShellTool().run({"command": f"echo {n}"}, ctx)
        assert result.exit_code == 0, result.output
    return (time.perf_counter() - started) / count * 1000


def stub_out() -> None:
    """The protections of this issue switched off (what main did before, but the depth-4 scan)."""
    sandbox_protected.protected_paths = lambda *roots: []

    class Off:
        refused: list[str] = []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    import agent_cli.tools.shell as shell

    shell.guarded = lambda *roots: Off()  # type: ignore[assignment]  # the protections off, for the comparison


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--commands", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as work:
        root = Path(work) / "repo"
        files, dirs = make_tree(root, args.files)
        time.sleep(RECENT_S + 0.5)  # an installed node_modules is not changing under the index
        policy = SandboxPolicy.create("workspace-write", root, [])
        started = time.perf_counter()
        sandbox_guard.nested_repositories(root)
        first = (time.perf_counter() - started) * 1000
        mounts: list[str] = []
        started = time.perf_counter()
        for _ in range(args.commands):
            with sandbox_guard.guarded(policy.workspace_roots, policy.writable_roots):
                mounts = sandbox_protected.read_only_paths(policy.workspace_roots, policy.writable_roots)
        added = (time.perf_counter() - started) / args.commands * 1000
        ctx = ToolContext(cwd=root, data_dir=Path(work) / "data", env=dict(os.environ), sandbox=policy)
        await shell_ms(ctx, 2)
        with_protections = await shell_ms(ctx, args.commands)
        stub_out()
        without = await shell_ms(ctx, args.commands)
    print(f"tree: {files:,} files in node_modules, {dirs:,} folders; mechanism {detect_mechanism().detail}")
    print(f"  first walk (once per session and root)         {first:7.1f} ms")
    print(f"  added per command (refresh, config, dotfiles)  {added:7.1f} ms   ({len(mounts)} read-only mounts)")
    print(f"  `echo` in the sandbox, with the protections    {with_protections:7.1f} ms/command")
    print(f"  `echo` in the sandbox, protections stubbed out {without:7.1f} ms/command")


if __name__ == "__main__":
    asyncio.run(main())

"""20 trivial commands through the shell tool: `bash -lc` (the login profile every time) next to
a non-login bash loading the session's snapshot (the profile once, then a file per command).

Run: python bench/shell_overhead.py [--commands N] [--sandbox] [--profile-seconds S]
Prints the total and per-command time of each, measured in this run, and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.sandbox.policy import SandboxPolicy  # noqa: E402
from agent_cli.tools.base import ToolContext  # noqa: E402
from agent_cli.tools.shell import ShellTool  # noqa: E402
from agent_cli.tools.shell_env import EnvPolicy, command_env  # noqa: E402
from agent_cli.tools.shell_snapshot import ShellSnapshot  # noqa: E402


async def run_commands(ctx: ToolContext, count: int) -> float:
    started = time.perf_counter()
    for n in range(count):
        result = await ShellTool().run({"command": f"echo {n}"}, ctx)
        assert result.exit_code == 0, result.output
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--sandbox", action="store_true", help="run them in the workspace-write sandbox")
    parser.add_argument(
        "--profile-seconds",
        type=float,
        metavar="S",
        help="instead of your login profile, a made-up one that takes S seconds",
    )
    args = parser.parse_args()
    scrub = functools.partial(command_env, EnvPolicy())
    with tempfile.TemporaryDirectory() as work:
        cwd = Path(work)
        home = os.environ.get("HOME", "")
        if args.profile_seconds is not None:
            home = work
            (cwd / ".profile").write_text(f"export FROM_PROFILE=1\nsleep {args.profile_seconds}\n")
        env = scrub({**os.environ, "HOME": home})
        sandbox = SandboxPolicy.create("workspace-write", cwd, []) if args.sandbox else None
        login = ToolContext(cwd=cwd, data_dir=cwd / "data", env=env, sandbox=sandbox)
        snapshot = ShellSnapshot(cwd / "snapshots", cwd, env, scrub, bash=shutil.which("bash"))
        loaded = ToolContext(cwd=cwd, data_dir=cwd / "data", env=env, sandbox=sandbox, shell_snapshot=snapshot)
        await run_commands(login, 2)  # warm the page cache for bash and the profile
        with_login = await run_commands(login, args.commands)
        started = time.perf_counter()
        await snapshot.ready()
        taking = time.perf_counter() - started
        with_snapshot = await run_commands(loaded, args.commands)
        snapshot.close()
    n = args.commands
    print(f"{n} commands{' in the sandbox' if args.sandbox else ''}:")
    print(f"  bash -lc (profile each time)  {with_login:6.2f} s  {with_login / n * 1000:6.1f} ms/command")
    print(
        f"  snapshot (profile once)       {with_snapshot:6.2f} s  {with_snapshot / n * 1000:6.1f} ms/command"
        f"  (+ {taking * 1000:.0f} ms to take it, once per session, in the background)"
    )
    print(f"  ratio snapshot / bash -lc: {with_snapshot / with_login:.2f}")


if __name__ == "__main__":
    asyncio.run(main())

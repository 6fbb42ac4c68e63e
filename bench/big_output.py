"""Benchmark: a command printing 1 GB through the ``shell`` tool, next to ``cat > /dev/null``.

Prints the agent process's peak RSS and the elapsed time for both, and their ratio. Target:
peak RSS < 200 MB whatever the command prints. The full output is spilled to a temporary data
folder (deleted afterwards), so the run needs about as much free disk as it prints.

    python bench/big_output.py [--bytes N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.tools.base import ToolContext  # noqa: E402
from agent_cli.tools.shell import ShellTool  # noqa: E402


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def stream_command(size: int) -> str:
    return f"yes 'some line of text for the benchmark' | head -c {size}"


def baseline(size: int) -> float:
    started = time.perf_counter()
    subprocess.run(["bash", "-c", f"{stream_command(size)} | cat > /dev/null"], check=True)
    return time.perf_counter() - started


async def through_shell_tool(size: int, data_dir: Path) -> tuple[float, str]:
    ctx = ToolContext(cwd=data_dir, data_dir=data_dir, emit=lambda event: None, call_id="bench")
    started = time.perf_counter()
    result = await ShellTool().run({"command": stream_command(size), "timeout_ms": 600_000}, ctx)
    return time.perf_counter() - started, result.output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000_000, help="bytes the command prints")
    size = parser.parse_args().bytes

    rss_before = peak_rss_mb()
    base_s = baseline(size)
    data_dir = Path(tempfile.mkdtemp(prefix="agent-bench-"))
    try:
        tool_s, output = asyncio.run(through_shell_tool(size, data_dir))
        spill = re.search(r"saved to (\S+);", output)
        spilled = Path(spill.group(1)).stat().st_size if spill else 0
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    rss_peak = peak_rss_mb()

    print(f"output size            {size / 1e6:,.0f} MB (spill file {spilled / 1e6:,.0f} MB)")
    print(f"model-facing text      {len(output.encode()):,} bytes")
    print(f"baseline cat >/dev/null {base_s:7.2f} s")
    print(f"shell tool              {tool_s:7.2f} s   peak RSS (agent) {rss_peak:6.1f} MB"
          f" (after imports {rss_before:.1f} MB)")  # fmt: skip
    print(f"ratio                   {tool_s / base_s:7.2f}x time")
    print(f"target peak RSS < 200 MB: {'ok' if rss_peak < 200 else 'MISSED'}")


if __name__ == "__main__":
    main()

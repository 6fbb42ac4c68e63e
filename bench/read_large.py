"""Benchmark: ``read_file`` on a 1 GB CSV and a 100 MB JSON, next to ``wc -l`` on the same files.

Each read runs in a fresh Python process so its peak RSS is its own (from ``wait4``). Prints wall
time and peak RSS for both, and the time ratio. Target: peak RSS < 200 MB. Two CSVs are measured:
one without quote characters, and one with a quoted field in every row and a quoted newline in one
row of 20,000 (the blocks holding one go through the csv module; the others are counted by their
newlines). The files are generated into a temporary folder one at a time and deleted after use
(about 1 GB of free disk needed).

    python bench/read_large.py [--csv-mb N] [--json-mb N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import asyncio, sys, time
from pathlib import Path
from agent_cli.tools.base import ToolContext
from agent_cli.tools.read_file import ReadFileTool
path = Path(sys.argv[1])
ctx = ToolContext(cwd=path.parent, data_dir=path.parent / "home")
started = time.perf_counter()
output = asyncio.run(ReadFileTool().run({"path": path.name}, ctx)).output
print(time.perf_counter() - started)
print(output.splitlines()[0][:100])
print(output.splitlines()[-1][:160])
"""


def write_csv(path: Path, size: int, quoted: bool) -> None:
    note = '"note, with a comma"' if quoted else "a plain note"
    block = "".join(f"{i},customer {i % 977},{i * 3.25:.2f},{note},2026-11-{1 + i % 28:02d}\n" for i in range(20_000))
    if quoted:
        block = block.replace(note, '"a note\non two lines"', 1)
    with path.open("w") as handle:
        handle.write("id,name,amount,note,date\n")
        written = 0
        while written < size:
            handle.write(block)
            written += len(block)


def write_json(path: Path, size: int) -> None:
    record = json.dumps({"id": 1, "user": {"name": "ada", "tags": ["a", "b", "c"]}, "text": "lorem ipsum " * 8})
    count = size // (len(record) + 2)
    with path.open("w") as handle:
        handle.write('{"records": [\n')
        for start in range(0, count, 10_000):  # in chunks: this process stays small, and so its children
            handle.write(
                ",\n".join(record for _ in range(start, min(count, start + 10_000))) + ",\n" * (start + 10_000 < count)
            )
        handle.write('\n], "count": %d}\n' % count)


def run_measured(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB and stdout of one child process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, stdout=out, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if child.returncode:
        raise SystemExit(f"{argv[:3]} failed with exit code {child.returncode}")
    return elapsed, usage.ru_maxrss / 1024, text


def compare(label: str, path: Path) -> bool:
    wc_s, wc_rss, wc_out = run_measured(["wc", "-l", str(path)])
    process_s, tool_rss, tool_out = run_measured([sys.executable, "-c", CHILD, str(path)])
    tool_s = float(tool_out.splitlines()[0])
    print(f"{label}: {path.stat().st_size / 1e6:,.0f} MB, {int(wc_out.split()[0]):,} lines")
    print(f"  wc -l       {wc_s:7.2f} s   peak RSS {wc_rss:7.1f} MB")
    print(
        f"  read_file   {tool_s:7.2f} s   peak RSS {tool_rss:7.1f} MB   ratio {tool_s / wc_s:.1f}x time"
        f"   (whole process with imports {process_s:.2f} s)"
    )
    for line in tool_out.splitlines()[1:]:
        print(f"    | {line}")
    return tool_rss < 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv-mb", type=int, default=1000)
    parser.add_argument("--json-mb", type=int, default=100)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="agent-bench-read-"))
    try:
        ok = True
        for label, name, write in (
            ("CSV without quotes", "plain.csv", lambda path: write_csv(path, args.csv_mb * 1_000_000, quoted=False)),
            (
                "CSV with quoted fields (and quoted newlines)",
                "quoted.csv",
                lambda path: write_csv(path, args.csv_mb * 1_000_000, quoted=True),
            ),
            ("JSON", "big.json", lambda path: write_json(path, args.json_mb * 1_000_000)),
        ):
            write(folder / name)
            ok &= compare(label, folder / name)
            (folder / name).unlink()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"target peak RSS < 200 MB: {'ok' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()

"""Benchmark: what judging one shell command against permission rules costs (issue 33).

Runs ``Permissions.decide`` for typical commands in a repository with a ``node_modules`` of N files
(default 50,000), with `deny: Bash(rm:*)` and `ask: Bash(git push:*)` (the engine then also stats
the programs and reads the shell scripts a line runs), and with no Bash rule (nothing of that).
The rule check never walks the tree, so the repository's size should not show.

    python bench/rule_check.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.permissions.engine import Permissions  # noqa: E402
from agent_cli.permissions.rules import parse_rule  # noqa: E402

COMMANDS = [
    "git status",
    "npm run test -- --watch=false && git diff --stat | head -50",
    "bash -o pipefail -c 'cd src && make -j4 2>&1 | tail -20'",
    "timeout 60 npx jest --ci node_modules/.bin/x",
    "./build.sh --release",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        modules = repo / "node_modules"
        for index in range(args.files):
            package = modules / f"p{index // 100}"
            package.mkdir(parents=True, exist_ok=True)
            (package / f"f{index}.js").write_text("")
        (repo / "build.sh").write_text("#!/bin/sh\nset -e\nnpm run build\ncp -r dist out\n")
        (repo / "build.sh").chmod(0o755)
        guarded = [
            parse_rule("Bash(rm:*)", "deny", "-c", repo, 1),
            parse_rule("Bash(git push:*)", "ask", "-c", repo, 1),
        ]
        for label, rules in (
            ("deny+ask Bash rules", guarded),
            ("only a Read rule", [parse_rule("Read(./.env)", "deny", "-c", repo, 1)]),
        ):
            permissions = Permissions(rules, repo)
            print(f"{label} ({args.files:,} files in node_modules):")
            for command in COMMANDS:
                permissions.decide("shell", {"command": command})
                start = time.perf_counter()
                for _ in range(args.runs):
                    permissions.decide("shell", {"command": command})
                each = (time.perf_counter() - start) / args.runs
                print(f"  {each * 1e6:8.0f} µs  {command}")


if __name__ == "__main__":
    main()

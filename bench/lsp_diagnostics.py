"""Benchmark: how long an edit waits for a language server's diagnostics, cold and warm, and
what they add to the model's context.

For each Python server found on PATH (basedpyright, pylsp, ruff's), in a fresh temporary project
of small modules: the first edit (the server starts, is shown the file as it was, then as it is),
then warm edits alternating a new undefined name and a clean line. Tokens are those of the block
added to the edit's output (ceil(bytes / 4), as the context counts before calibration).

    python bench/lsp_diagnostics.py [--modules N] [--edits K]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.context.truncate import approx_tokens  # noqa: E402
from agent_cli.events import FileChange  # noqa: E402
from agent_cli.lsp.manager import LspManager, LspSettings  # noqa: E402
from agent_cli.lsp.servers import configured_specs  # noqa: E402
from agent_cli.tools.apply_patch import unified_diff  # noqa: E402

SERVERS = {"basedpyright": "basedpyright-langserver", "pylsp": "pylsp", "ruff": "ruff"}


def project(root: Path, modules: int) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    (root / "mod0.py").write_text("def f0(x: int) -> int:\n    return x\n")
    for n in range(1, modules):
        (root / f"mod{n}.py").write_text(
            f"from mod{n - 1} import f{n - 1}\n\n\ndef f{n}(x: int) -> int:\n    return f{n - 1}(x) * {n}\n"
        )


async def edit(manager: LspManager, root: Path, line: str) -> tuple[float, int]:
    path = root / "mod1.py"
    before = path.read_text()
    after = before + line + "\n"
    path.write_text(after)
    started = time.perf_counter()
    report = await manager.after_edit(
        [FileChange("mod1.py", "update", None, unified_diff("mod1.py", "mod1.py", before.encode(), after.encode()))],
        root,
    )
    return time.perf_counter() - started, approx_tokens(report.text) if report.text else 0


async def bench(name: str, modules: int, edits: int) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root, modules)
        specs = [spec for spec in configured_specs({name: {}}) if spec.name == name]
        manager = LspManager(LspSettings(specs, root, 60.0, 1_000, None, root / ".logs"))
        try:
            cold, cold_tokens = await edit(manager, root, "print(cold_undefined)")
            warm_broken, warm_clean, tokens = [], [], []
            for n in range(edits):
                if n % 2 == 0:
                    seconds, added = await edit(manager, root, f"print(undefined_{n})")
                    warm_broken.append(seconds)
                    tokens.append(added)
                else:
                    seconds, added = await edit(manager, root, f"value_{n} = {n}")
                    warm_clean.append(seconds)
                    assert added == 0, "a clean edit added diagnostics"
        finally:
            await manager.aclose()
    return {
        "server": name,
        "cold (s)": f"{cold:.2f}",
        "warm, new error (s)": f"{statistics.median(warm_broken):.2f}",
        "warm, clean (s)": f"{statistics.median(warm_clean):.2f}",
        "tokens per error": f"{statistics.median(tokens + [cold_tokens]):.0f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=50)
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()
    rows = []
    for name, command in SERVERS.items():
        if shutil.which(command) is None:
            print(f"{name}: not installed, skipped")
            continue
        rows.append(asyncio.run(bench(name, args.modules, args.edits)))
    if rows:
        keys = list(rows[0])
        widths = [max(len(key), *(len(row[key]) for row in rows)) for key in keys]
        print("  ".join(key.ljust(width) for key, width in zip(keys, widths, strict=True)))
        for row in rows:
            print("  ".join(row[key].ljust(width) for key, width in zip(keys, widths, strict=True)))


if __name__ == "__main__":
    main()

"""Which lint and test commands a repository's own files suggest (``/init`` offers them)."""

from __future__ import annotations

import json
import re
from pathlib import Path

MAKE_TARGET = re.compile(r"^(lint|check|test|tests)\s*:", re.MULTILINE)
NO_TEST = "no test specified"  # npm init's placeholder script


def suggested_checks(root: Path) -> dict[str, str]:
    """``{"lint": ..., "test": ...}`` from the Makefile, package.json, pyproject.toml, Cargo.toml or
    go.mod, in that order (the first that names one wins)."""
    found: dict[str, str] = {}

    def offer(kind: str, command: str) -> None:
        found.setdefault(kind, command)

    makefile = _read(root / "Makefile")
    for target in MAKE_TARGET.findall(makefile):
        offer("test" if target.startswith("test") else "lint", f"make {target}")
    try:
        scripts = json.loads(_read(root / "package.json") or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        scripts = {}
    if isinstance(scripts, dict):
        if "lint" in scripts:
            offer("lint", "npm run lint")
        if "test" in scripts and NO_TEST not in str(scripts["test"]):
            offer("test", "npm test")
    pyproject = _read(root / "pyproject.toml")
    if pyproject:
        if "ruff" in pyproject:
            offer("lint", "ruff check")
        if "pytest" in pyproject or (root / "tests").is_dir():
            offer("test", "python -m pytest -q")
    if (root / "Cargo.toml").is_file():
        offer("lint", "cargo clippy --quiet")
        offer("test", "cargo test --quiet")
    if (root / "go.mod").is_file():
        offer("lint", "go vet ./...")
        offer("test", "go test ./...")
    return found


def suggestion_note(root: Path, configured: dict[str, str | None]) -> str | None:
    """What to add to the config, for the checks not configured yet; None when there is nothing."""
    missing = {kind: command for kind, command in suggested_checks(root).items() if not configured.get(kind)}
    if not missing:
        return None
    lines = [f"{kind}_command = {json.dumps(command)}" for kind, command in sorted(missing.items())]
    return (
        "This repository suggests checks to run after each turn that changes files "
        "(add them to .agent/config.toml or ~/.agent/config.toml):\n" + "\n".join(lines)
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000] if path.is_file() else ""
    except OSError:
        return ""

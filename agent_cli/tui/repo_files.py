"""The repository's files for ``@`` completion, and a small fuzzy matcher over them.

Files come from ``git ls-files -co --exclude-standard`` (tracked plus untracked-not-ignored);
outside a git repository a bounded directory walk that skips hidden and build folders is used.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MAX_FILES = 50_000
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "target", "dist", "build"})
SEPARATORS = "/_-. "


def list_files(root: Path) -> list[str]:
    """Relative paths of the files under ``root`` that the user would mention."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=root,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode == 0:
        names = [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]
        return sorted(set(names))[:MAX_FILES]
    return walk(root)


def walk(root: Path) -> list[str]:
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        base = Path(directory).relative_to(root)
        for name in sorted(files):
            if not name.startswith("."):
                found.append(str(base / name) if str(base) != "." else name)
                if len(found) >= MAX_FILES:
                    return found
    return found


def score(query: str, path: str) -> float | None:
    """How well ``query`` matches ``path`` as a subsequence (higher is better), or None.

    Matches at the start of a path segment or word, consecutive matches and matches in the file
    name count more; long paths count a little less.
    """
    lowered = path.lower()
    base_start = lowered.rfind("/") + 1
    total = 0.0
    position = -1
    previous = -2
    for char in query.lower():
        position = lowered.find(char, position + 1)
        if position < 0:
            return None
        points = 1.0
        if position == 0 or lowered[position - 1] in SEPARATORS:
            points += 2.0
        if position == previous + 1:
            points += 1.5
        if position >= base_start:
            points += 1.0
        total += points
        previous = position
    if query.lower() in lowered[base_start:]:
        total += 3.0
    return total - len(path) * 0.01


def fuzzy_filter(query: str, paths: list[str], limit: int = 10) -> list[str]:
    """The best ``limit`` paths for ``query``; an empty query gives the first paths."""
    if not query:
        return paths[:limit]
    scored = [(value, path) for path in paths if (value := score(query, path)) is not None]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [path for _, path in scored[:limit]]

"""Paths that stay read-only inside the sandbox even beneath a writable root: what the agent, Claude
Code or git load and run later (``.agent/``, ``.claude/``, ``.mcp.json``, ``.git/`` of the workspace
and of nested repositories), and the files the agent's own unsandboxed commands run (a hook's
``scripts/hook.sh``: ``SandboxPolicy.read_only_files``).

One that exists is bound read-only. One that does not cannot be covered by a mount without making
it, and nothing is made in the user's tree for it: the model sees the tree as it is (no empty
``.agent/`` or ``.mcp.json/`` folders), and agents running side by side in one repository share
nothing to race on. If a command creates one, guard.py moves it to the quarantine folder when the
command ends, and the tool's output says so. ``AGENTS.md`` is text the model reads, not code: writable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agent_cli.sandbox.guard import PROTECTED_NAMES, mount_paths, protected_paths

__all__ = ["PROTECTED_NAMES", "protected_part", "read_only_paths"]


def protected_part(path: Path, roots: Iterable[Path]) -> Path | None:
    """The protected path (``<root>/.../.git`` and the like) that ``path`` is or lies in."""
    for root in roots:
        if path == root or not path.is_relative_to(root):
            continue
        parts = path.relative_to(root).parts
        for index, part in enumerate(parts):
            if part in PROTECTED_NAMES:
                return root.joinpath(*parts[: index + 1])
    return None


def read_only_paths(
    workspace_roots: Iterable[Path], all_roots: Iterable[Path], files: Iterable[Path] = ()
) -> list[str]:
    """What to mount read-only: the protected names at each writable root, what guard.py adds
    (nested ``.git`` at any depth, git hooks and config, dotfiles) and ``files``, those that exist."""
    workspace_roots, all_roots = list(workspace_roots), list(all_roots)
    paths: list[Path] = [root / name for root in all_roots for name in PROTECTED_NAMES]
    listed = [str(p) for p in dict.fromkeys(paths) if os.path.lexists(p) and not os.path.islink(p)]
    guarded = [*protected_paths(workspace_roots, all_roots), *files]
    return list(dict.fromkeys(listed + mount_paths(guarded, all_roots)))

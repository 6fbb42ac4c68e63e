"""AGENTS.md discovery: the user's global file, then one file per folder from the git root to cwd.

Project docs come only from inside the repository (the git root, else cwd): a fallback name is a
file name, never a path (``/abs/secret.txt`` and ``../secret.txt`` are ignored with a warning), and
a symlink is followed only when its target is inside too. A file a Read deny rule hides (the link
or its target) is not sent either.

One byte budget (``project_doc_max_bytes``) is shared by all files and spent in order, global
file first, then root to cwd. Unlike Codex, a file that does not fit is cut with a visible marker
and a warning that names it, and files that no longer fit at all are named in a warning too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_cli.context.fragments import agents_md_text
from agent_cli.ownership import is_own_folder, own_folders

DEFAULT_MAX_BYTES = 32 * 1024
OVERRIDE_NAME = "AGENTS.override.md"
DEFAULT_NAME = "AGENTS.md"


@dataclass(frozen=True, slots=True)
class ProjectDocFile:
    path: Path
    text: str  # what the model sees, marker included when cut
    size: int  # bytes of the whole file (after lossy decoding)
    truncated: bool
    is_global: bool = False


@dataclass(frozen=True, slots=True)
class ProjectDocs:
    cwd: Path
    git_root: Path | None
    files: tuple[ProjectDocFile, ...]
    text: str | None  # the rendered user-role fragment; None when there is nothing to send
    warnings: tuple[str, ...]


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a worktree file),
    among the user's own folders (agent_cli/ownership.py: another user's `/tmp/.git` is none)."""
    for directory in own_folders(start):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def repository_root(cwd: Path) -> Path | None:
    """The folder whose repository files apply (`.agent/`, `.claude/`, `.mcp.json`, plugins,
    agent, command and skill files): the git root, else ``cwd``; None when ``cwd`` is a folder
    another user can write, whose files are then never read."""
    cwd = Path(cwd).resolve()
    return find_git_root(cwd) or (cwd if is_own_folder(cwd) else None)


def is_plain_name(name: str) -> bool:
    """A file name, not a path: no folder part, no `..`."""
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


def candidate_names(fallback_filenames: Iterable[str] = ()) -> list[str]:
    names = [OVERRIDE_NAME, DEFAULT_NAME]
    names += [name for name in fallback_filenames if is_plain_name(name) and name not in names]
    return names


@dataclass(frozen=True, slots=True)
class Discovery:
    git_root: Path | None
    global_doc: Path | None
    project_docs: tuple[Path, ...]  # root first, cwd last
    skipped: tuple[str, ...] = ()  # why a name or a file was not used


def discover_project_docs(
    cwd: Path,
    agent_home: Path | None,
    fallback_filenames: Iterable[str] = (),
    hidden: Callable[[Path], object] | None = None,
) -> Discovery:
    """Which files would be sent, in order, without reading them. ``hidden`` names the Read deny
    rule that hides a path (None: no rule does)."""
    cwd = Path(cwd).resolve()
    global_doc = _first_file(Path(agent_home), [OVERRIDE_NAME, DEFAULT_NAME]) if agent_home is not None else None
    git_root = find_git_root(cwd)
    if git_root is None:
        directories = [cwd]
    else:
        depth = len(cwd.relative_to(git_root).parts)
        directories = [cwd.parents[i] for i in reversed(range(depth))] + [cwd]
    skipped = [
        f"project_doc_fallback_filenames: {name!r} is not a file name; ignored (project docs are read only "
        "from the repository's own folders)"
        for name in fallback_filenames
        if not is_plain_name(name)
    ]
    names = candidate_names(fallback_filenames)
    root = git_root or cwd
    found = []
    for directory in directories:
        doc = _first_file(directory, names, root, hidden, skipped)
        if doc is not None and doc != global_doc:
            found.append(doc)
    if global_doc is not None and hidden is not None and (rule := _hidden_by(global_doc, hidden)):
        skipped.append(f"{global_doc}: not loaded, the permission rule `{rule}` hides it")
        global_doc = None
    return Discovery(git_root, global_doc, tuple(found), tuple(skipped))


def load_project_docs(
    cwd: Path,
    agent_home: Path | None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    fallback_filenames: Iterable[str] = (),
    hidden: Callable[[Path], object] | None = None,
) -> ProjectDocs:
    cwd = Path(cwd)
    if max_bytes <= 0:
        return ProjectDocs(cwd, find_git_root(cwd.resolve()), (), None, ())
    found = discover_project_docs(cwd, agent_home, fallback_filenames, hidden)
    git_root = found.git_root
    paths = ([found.global_doc] if found.global_doc else []) + list(found.project_docs)
    warnings: list[str] = list(found.skipped)
    files: list[ProjectDocFile] = []
    remaining = max_bytes
    for path in paths:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            warnings.append(f"{path}: cannot read ({exc.strerror or exc}); skipped")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            warnings.append(f"{path}: not valid UTF-8; undecodable bytes were replaced with U+FFFD")
        text = text.strip()
        if not text:
            continue
        data = text.encode("utf-8")
        is_global = path == found.global_doc
        if remaining <= 0:
            warnings.append(
                f"{path}: not loaded, the AGENTS.md budget (project_doc_max_bytes = {max_bytes}) "
                "was used up by earlier files"
            )
            continue
        if len(data) <= remaining:
            files.append(ProjectDocFile(path, text, len(data), False, is_global))
            remaining -= len(data)
            continue
        kept = _cut_utf8(data, remaining)
        marker = (
            f"[... truncated: {len(data) - len(kept.encode('utf-8'))} of {len(data)} bytes of this file were cut "
            f"to fit project_doc_max_bytes = {max_bytes} ...]"
        )
        files.append(ProjectDocFile(path, f"{kept.rstrip()}\n\n{marker}", len(data), True, is_global))
        warnings.append(
            f"{path}: truncated to {len(kept.encode('utf-8'))} of {len(data)} bytes "
            f"(project_doc_max_bytes = {max_bytes}); raise the limit to send all of it"
        )
        remaining = 0
    text = render_project_docs(cwd, files) if files else None
    return ProjectDocs(cwd, git_root, tuple(files), text, tuple(warnings))


def render_project_docs(cwd: Path, files: Iterable[ProjectDocFile]) -> str:
    """One fragment; each file is introduced by a short line naming where it comes from."""
    parts = [f"--- {_origin(doc)} ---\n{doc.text}" for doc in files]
    return agents_md_text(cwd, "\n\n".join(parts))


def _origin(doc: ProjectDocFile) -> str:
    return f"{doc.path} (global)" if doc.is_global else str(doc.path)


def _first_file(
    directory: Path,
    names: Iterable[str],
    root: Path | None = None,
    hidden: Callable[[Path], object] | None = None,
    skipped: list[str] | None = None,
) -> Path | None:
    """The first of ``names`` in ``directory`` that is a file; with ``root``, one whose real path is
    inside it and that no Read deny rule hides (the others are named in ``skipped``)."""
    for name in names:
        candidate = directory / name
        if not candidate.is_file():  # follows symlinks; a dangling link is skipped
            continue
        if root is not None:
            real = candidate.resolve()
            if not real.is_relative_to(root):
                if skipped is not None:
                    skipped.append(f"{candidate}: not loaded, it leads outside the repository (to {real})")
                continue
            if hidden is not None and (rule := _hidden_by(candidate, hidden)):
                if skipped is not None:
                    skipped.append(f"{candidate}: not loaded, the permission rule `{rule}` hides it")
                continue
        return candidate
    return None


def _hidden_by(path: Path, hidden: Callable[[Path], object]) -> object:
    """The Read deny rule that hides ``path`` or the file it links to."""
    return hidden(path.absolute()) or hidden(path.resolve())


def _cut_utf8(data: bytes, limit: int) -> str:
    """The longest prefix of ``data`` within ``limit`` bytes that ends on a character boundary."""
    return data[:limit].decode("utf-8", errors="ignore")

"""The few git queries ``/diff`` and ``/review`` need, with untracked files counted as changes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from agent_cli.commands.errors import InputError
from agent_cli.tools.process import communicate_or_kill

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's hash of an empty tree
GIT_TIMEOUT_S = 60
MAX_UNTRACKED_FILES = 200
MAX_UNTRACKED_BYTES = 512 * 1024
_BASE_ARGS = ("git", "--no-pager", "-c", "color.ui=never", "-c", "core.quotepath=off")


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int
    out: str
    err: str


async def git(cwd: Path, *args: str) -> GitResult:
    try:
        process = await asyncio.create_subprocess_exec(
            *_BASE_ARGS,
            *args,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise InputError("git is not installed (or not on PATH)") from None
    try:
        out, err = await communicate_or_kill(process, GIT_TIMEOUT_S)
    except TimeoutError:
        raise InputError(f"`git {args[0]}` did not finish within {GIT_TIMEOUT_S} s") from None
    code = process.returncode if process.returncode is not None else -1
    return GitResult(code, out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace").strip())


async def require_repo(cwd: Path) -> None:
    result = await git(cwd, "rev-parse", "--is-inside-work-tree")
    if result.code != 0 or result.out.strip() != "true":
        raise InputError(f"{cwd} is not inside a git repository")


async def head_or_empty_tree(cwd: Path) -> str:
    """HEAD, or the empty tree in a repository with no commit yet."""
    result = await git(cwd, "rev-parse", "--verify", "--quiet", "HEAD")
    return "HEAD" if result.code == 0 else EMPTY_TREE


async def untracked_files(cwd: Path) -> list[str]:
    result = await git(cwd, "ls-files", "--others", "--exclude-standard", "-z")
    return [name for name in result.out.split("\0") if name]


async def untracked_diff(cwd: Path) -> str:
    """Each untracked (not ignored) file as an added-file diff."""
    names = await untracked_files(cwd)
    parts: list[str] = []
    for name in names[:MAX_UNTRACKED_FILES]:
        size = _size(cwd / name)
        if size > MAX_UNTRACKED_BYTES:  # a data file or a build artifact: name it, do not inline it
            parts.append(f"diff --git a/{name} b/{name}\nnew untracked file, {size:,} bytes: too large to show\n")
            continue
        # --no-index exits 1 when the files differ, which they always do here
        result = await git(cwd, "diff", "--no-ext-diff", "--no-index", "--", "/dev/null", name)
        parts.append(result.out)
    if len(names) > MAX_UNTRACKED_FILES:
        parts.append(f"… {len(names) - MAX_UNTRACKED_FILES} more untracked files not shown\n")
    return "".join(parts)


async def diff_against(cwd: Path, base: str) -> str:
    """The working tree (tracked changes and untracked files) compared with ``base``."""
    await require_repo(cwd)
    result = await git(cwd, "diff", "--no-ext-diff", base)
    if result.code != 0:
        raise InputError(f"git diff {base} failed: {result.err or 'exit code ' + str(result.code)}")
    return result.out + await untracked_diff(cwd)


async def uncommitted_diff(cwd: Path) -> str:
    await require_repo(cwd)
    return await diff_against(cwd, await head_or_empty_tree(cwd))


async def merge_base(cwd: Path, branch: str) -> str:
    await require_repo(cwd)
    if branch.startswith("-"):
        raise InputError(f"--base needs a branch name, got {branch!r}")
    result = await git(cwd, "merge-base", "HEAD", branch)
    if result.code != 0:
        raise InputError(f"no merge base between HEAD and {branch!r}: {result.err or 'is the branch name right?'}")
    return result.out.strip()


async def show_commit(cwd: Path, sha: str) -> str:
    await require_repo(cwd)
    if sha.startswith("-"):
        raise InputError(f"--commit needs a commit, got {sha!r}")
    result = await git(cwd, "show", "--no-ext-diff", "--format=fuller", sha, "--")
    if result.code != 0:
        raise InputError(f"unknown commit {sha!r}: {result.err}")
    return result.out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0

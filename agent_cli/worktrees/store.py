"""Creating, finding, listing and removing the agent's worktrees of a repository (git only).

Each worktree has a record beside it, ``<repository folder>/.records/NAME.json`` (name, path,
branch, the commit it started from, the main checkout), so that listing needs no git and
``agent sessions`` can say where a session ran. The record sits outside the checkout: nothing run
in the worktree (under the sandbox its only writable root) can change it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from agent_cli.worktrees.git import GitError, output, run

try:  # advisory locks are POSIX; elsewhere a worktree in use is not marked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

BRANCH_PREFIX = "agent/"
FOLDER = "worktrees"  # under $AGENT_HOME
RECORDS = ".records"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
WORDS = ("amber", "brisk", "calm", "deft", "eager", "fair", "glad", "keen", "lucid", "merry", "nimble", "quiet")
ANIMALS = ("otter", "heron", "lynx", "finch", "badger", "wren", "ibis", "marten", "newt", "owl", "seal", "vole")


@dataclass(frozen=True, slots=True)
class Repository:
    main: Path  # the main checkout (where .git is)
    toplevel: Path  # the checkout the command ran in (the main one, or a worktree)
    common: Path  # the git directory its worktrees share (main/.git)


@dataclass(frozen=True, slots=True)
class Worktree:
    name: str
    path: Path
    branch: str
    base: str  # the commit it was created from
    repository: Path  # the main checkout
    created: str = ""

    @property
    def exists(self) -> bool:
        return self.path.is_dir()

    def describe(self) -> dict[str, str]:
        """What a session file's header and ``agent exec --json`` say about it."""
        return {"name": self.name, "path": str(self.path), "branch": self.branch, "repository": str(self.repository)}


@dataclass(frozen=True, slots=True)
class WorktreeState:
    changed: tuple[str, ...]  # `git status --porcelain` lines: uncommitted changes, untracked files
    commits: int  # commits on its branch since it was created

    @property
    def clean(self) -> bool:
        return not self.changed and self.commits == 0

    def summary(self) -> str:
        parts = []
        if self.changed:
            parts.append(f"{len(self.changed)} uncommitted change{'s' if len(self.changed) != 1 else ''}")
        if self.commits:
            parts.append(f"{self.commits} commit{'s' if self.commits != 1 else ''}")
        return ", ".join(parts) or "no changes"


def check_name(name: str) -> str:
    """``name`` if it can name a worktree and its branch; ValueError saying why not otherwise."""
    if not NAME_PATTERN.match(name) or name.endswith(".lock") or ".." in name:
        raise ValueError(
            f"{name!r} cannot name a worktree: use up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


def generated_name() -> str:
    return f"{secrets.choice(WORDS)}-{secrets.choice(ANIMALS)}-{secrets.token_hex(2)}"


def repository_of(cwd: Path) -> Repository:
    """The repository ``cwd`` is in; GitError when it is in none (or in a bare one)."""
    cwd = Path(cwd).resolve()
    try:
        lines = output(cwd, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir").splitlines()
    except GitError:
        raise GitError(f"{cwd} is not inside a git repository: a worktree needs one") from None
    if len(lines) < 2 or not lines[0]:
        raise GitError(f"{cwd} is not inside a git work tree: a worktree needs one")
    common = Path(lines[1]).resolve()
    main = common.parent if common.name == ".git" else Path(lines[0]).resolve()
    return Repository(main=main, toplevel=Path(lines[0]).resolve(), common=common)


def repository_folder(agent_home: Path, main: Path) -> Path:
    digest = hashlib.sha256(str(main).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", main.name) or "repository"
    return Path(agent_home) / FOLDER / f"{safe}-{digest}"


def _record_path(agent_home: Path, main: Path, name: str) -> Path:
    return repository_folder(agent_home, main) / RECORDS / f"{name}.json"


# Worktrees this process works in: a shared lock on each one's lock file for as long as the
# process runs, so another agent does not remove a worktree in use (removing takes it exclusively).
_held: dict[Path, int] = {}


def _lock_path(agent_home: Path, worktree: Worktree) -> Path:
    return _record_path(agent_home, worktree.repository, worktree.name).with_suffix(".lock")


def hold(agent_home: Path, worktree: Worktree) -> None:
    """Mark ``worktree`` in use by this process until it ends (or :func:`release`)."""
    path = _lock_path(agent_home, worktree)
    if path in _held or fcntl is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return  # a filesystem without locks: nothing is marked
    _held[path] = fd


def held_worktrees() -> list[Worktree]:
    """The worktrees this process works in (entered, switched to, a subagent's kept one)."""
    return [worktree for path in list(_held) if (worktree := _read_record(path.with_suffix(".json"))) is not None]


def release(agent_home: Path, worktree: Worktree) -> None:
    if (fd := _held.pop(_lock_path(agent_home, worktree), None)) is not None:
        os.close(fd)


def in_use(agent_home: Path, worktree: Worktree) -> bool:
    """Whether another process (a running session) works in ``worktree``."""
    path = _lock_path(agent_home, worktree)
    if not path.exists() or fcntl is None:
        return False
    mine = _held.pop(path, None)
    if mine is not None:
        os.close(mine)  # our own shared lock (another open file) would block the exclusive one
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        busy = True
    except OSError:
        busy = False
    else:
        busy = False
    finally:
        os.close(fd)
    if mine is not None:
        hold(agent_home, worktree)
    return busy


def _write_record(agent_home: Path, worktree: Worktree) -> None:
    path = _record_path(agent_home, worktree.repository, worktree.name)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {**asdict(worktree), "path": str(worktree.path), "repository": str(worktree.repository)}
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _read_record(path: Path) -> Worktree | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Worktree(
            name=str(data["name"]),
            path=Path(data["path"]),
            branch=str(data["branch"]),
            base=str(data["base"]),
            repository=Path(data["repository"]),
            created=str(data.get("created", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find(agent_home: Path, main: Path, name: str) -> Worktree | None:
    return _read_record(_record_path(agent_home, main, name))


def containing(agent_home: Path, path: Path) -> Worktree | None:
    """The agent's worktree ``path`` is in (its folder or below), found by its record; no git."""
    path = Path(path).resolve()
    root = (Path(agent_home) / FOLDER).resolve()
    if not path.is_relative_to(root):
        return None
    parts = path.relative_to(root).parts
    if len(parts) < 2 or parts[1] == RECORDS:
        return None
    worktree = _read_record(root / parts[0] / RECORDS / f"{parts[1]}.json")
    return worktree if worktree is not None and worktree.path.resolve() == root / parts[0] / parts[1] else None


def list_worktrees(agent_home: Path, main: Path | None = None) -> list[Worktree]:
    """The recorded worktrees of ``main`` (every repository's when None), oldest first."""
    root = Path(agent_home) / FOLDER
    folders = [repository_folder(agent_home, main)] if main is not None else sorted(root.glob("*"))
    found = [w for folder in folders for w in map(_read_record, sorted((folder / RECORDS).glob("*.json"))) if w]
    return sorted(found, key=lambda worktree: (worktree.created, worktree.name))


def branch_exists(main: Path, branch: str) -> bool:
    return run(main, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).returncode == 0


def create(agent_home: Path, repository: Repository, name: str, base: str | None = None) -> tuple[Worktree, list[str]]:
    """A new worktree NAME on branch ``agent/NAME`` from ``base`` (default: the HEAD of the checkout
    the command ran in), with its submodules checked out. An existing ``agent/NAME`` branch (a
    worktree removed earlier whose branch was kept) is checked out as it is. Returns the worktree
    and warnings (a submodule that could not be checked out)."""
    check_name(name)
    branch = BRANCH_PREFIX + name
    path = repository_folder(agent_home, repository.main) / name
    if path.exists():
        raise GitError(f"{path} already exists but is not a worktree the agent knows; remove it or choose another name")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if branch_exists(repository.main, branch):
        if base is not None:
            raise GitError(f"branch {branch} already exists; --base applies only to a new branch")
        # its commits count as the worktree's own (so leaving it never deletes them with the branch)
        start = run(repository.toplevel, "merge-base", "HEAD", f"refs/heads/{branch}", check=False).stdout.strip()
        # (no common commit: unrelated histories, every commit of the branch is its own: base "")
        run(repository.toplevel, "worktree", "add", "--quiet", str(path), branch)
    else:
        try:
            start = output(repository.toplevel, "rev-parse", "--verify", f"{base or 'HEAD'}^{{commit}}")
        except GitError:
            what = f"--base {base}" if base else "HEAD"
            raise GitError(f"{what} does not name a commit (a repository needs one commit for a worktree)") from None
        run(repository.toplevel, "worktree", "add", "--quiet", "-b", branch, str(path), start)
    worktree = Worktree(
        name, path.resolve(), branch, start, repository.main, datetime.now().astimezone().isoformat(timespec="seconds")
    )
    _write_record(agent_home, worktree)
    return worktree, checkout_submodules(worktree.path)


def checkout_submodules(path: Path) -> list[str]:
    """``git submodule update --init --recursive`` where the checkout has submodules; a failure is
    a warning (the session still starts, without them)."""
    if not (path / ".gitmodules").is_file():
        return []
    try:
        run(path, "submodule", "update", "--init", "--recursive", "--quiet")
    except GitError as exc:
        return [f"the worktree's submodules could not be checked out ({exc}); run `git submodule update --init` there"]
    return []


def state(worktree: Worktree) -> WorktreeState:
    """Uncommitted changes (untracked files too) and commits since it was created."""
    changed = run(worktree.path, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()
    count = output(worktree.path, "rev-list", "--count", _since(worktree.base, "HEAD"))
    return WorktreeState(tuple(line for line in changed if line.strip()), int(count or 0))


def remove(agent_home: Path, worktree: Worktree, *, force: bool = False) -> str:
    """Remove the worktree's folder, and its branch when it holds no commit of its own. Refuses
    uncommitted changes unless ``force``, and always a worktree another running agent works in.
    Returns what was done, for the user."""
    if in_use(agent_home, worktree):
        raise GitError(f"worktree {worktree.name} is in use by another running agent; it stays")
    release(agent_home, worktree)
    if worktree.exists:
        current = state(worktree)
        if current.changed and not force:
            raise GitError(
                f"worktree {worktree.name} has {current.summary()}; commit them, or remove it anyway with --force"
            )
        commits = current.commits
        # git refuses a worktree with submodules even when clean; we checked it ourselves above
        forced = ("--force", "--force") if force or (worktree.path / ".gitmodules").exists() else ()
        run(worktree.repository, "worktree", "remove", *forced, str(worktree.path))
    else:
        run(worktree.repository, "worktree", "prune", check=False)
        commits = _commits_on_branch(worktree)
    if worktree.path.exists():  # what git left behind (an ignored folder of a submodule)
        shutil.rmtree(worktree.path, ignore_errors=True)
    forget(agent_home, worktree)
    done = f"removed worktree {worktree.name} ({worktree.path})"
    if commits and branch_exists(worktree.repository, worktree.branch):
        return f"{done}; kept branch {worktree.branch} with its {commits} commit(s)"
    with contextlib.suppress(GitError):
        run(worktree.repository, "branch", "-D", "--quiet", worktree.branch)
    return f"{done} and its branch {worktree.branch}"


def forget(agent_home: Path, worktree: Worktree) -> None:
    """Drop the record of ``worktree`` and its lock file (its folder and branch are not touched)."""
    release(agent_home, worktree)
    _record_path(agent_home, worktree.repository, worktree.name).unlink(missing_ok=True)
    _lock_path(agent_home, worktree).unlink(missing_ok=True)


def _commits_on_branch(worktree: Worktree) -> int:
    if not branch_exists(worktree.repository, worktree.branch):
        return 0
    return int(output(worktree.repository, "rev-list", "--count", _since(worktree.base, worktree.branch)) or 0)


def _since(base: str, tip: str) -> str:
    return f"{base}..{tip}" if base else tip


def prune(agent_home: Path, main: Path) -> list[str]:
    """Forget worktrees whose folder is gone (``git worktree prune``, and their records; a branch
    with no commit of its own goes too). Returns what was done."""
    run(main, "worktree", "prune", check=False)
    done = []
    for worktree in list_worktrees(agent_home, main):
        if not worktree.exists:
            done.append(remove(agent_home, worktree))
    return done

"""What else stays read-only in the sandbox, beyond ``.git``/``.agent``/``.claude``/``.mcp.json`` at
a root (sandbox_protected.py): whatever the user's programs later read code or commands from.

- **Git**: every ``.git`` at any depth of a workspace root (repo_index.py), the folder each
  ``core.hooksPath`` names and every file an ``include`` names (in the repository's config, the
  user's and the system's: git_config.py), and the user's git config files.
- **Dotfiles**: shell start-up files, ``.gitconfig``, ``.config/git``, ``.ssh``, ``.gnupg``,
  ``.npmrc``, ``.pypirc``, ``.netrc``, ``.docker``, ``.kube``, the agent's home, Claude Code's
  and Codex's folders: in ``$HOME`` and at the top of each workspace root.

Those that exist are bound read-only (both mechanisms, like the rest). One that does not exist
(or is a symbolic link, which a mount cannot cover), ``.agent``/``.claude``/``.mcp.json``/``.git``
missing at a workspace root included, is checked when the command ends: if it appeared or changed,
it is moved to a quarantine folder and the tool's output says so. So is a file an unsandboxed
command of the agent runs (a hook's script, bound read-only) whose folder was swapped for another
(``mv scripts old; mkdir scripts``). A repository that appeared during the command is sanitized
(repo_sanitize.py) and protected from then on.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.sandbox.git_config import git_dirs, hooks_and_includes, repository_files, user_config_files
from agent_cli.sandbox.repo_index import MAX_DIRS, RepoIndex
from agent_cli.sandbox.repo_sanitize import quarantine, sanitize

HOME_NAMES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".gnupg",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".docker",
    ".kube",
    ".claude",
    ".claude.json",
    ".codex",
)
PROJECT_EXEMPT = (".docker",)
# At the top of each writable root, existing or not: what the agent, Claude Code and git load.
PROTECTED_NAMES = (".git", ".agent", ".claude", ".mcp.json")
QUARANTINE = "refused"  # under the agent's home
MAX_INDEXES = 8  # workspace roots indexed at once in one process

_lock = threading.Lock()
_indexes: dict[Path, RepoIndex] = {}
_warned_full: set[Path] = set()


def agent_home() -> Path:
    return Path(os.environ.get("AGENT_HOME") or Path.home() / ".agent").expanduser()


def _within(path: Path, roots: Iterable[Path]) -> bool:
    text = str(path)  # strings: this runs for every candidate of every command
    return any(text == str(root) or text.startswith(str(root).rstrip("/") + "/") for root in roots)


def home_paths(workspace_roots: Iterable[Path]) -> list[Path]:
    """Dotfiles and config folders that programs run or trust, wherever they may be."""
    home = Path.home()
    paths = [home / name for name in HOME_NAMES]
    # at a project's top too (a project's .npmrc runs code on `npm install`), but its .docker/ is
    # usually Dockerfiles, not credentials
    paths += [root / name for root in workspace_roots for name in HOME_NAMES if name not in PROJECT_EXEMPT]
    paths.append(agent_home())
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        if value := os.environ.get(variable):
            paths.append(Path(value).expanduser())
    paths += user_config_files()
    return [Path(os.path.abspath(path)) for path in paths]


def index(root: Path) -> RepoIndex:
    with _lock:
        found = _indexes.get(root)
        if found is None:
            while len(_indexes) >= MAX_INDEXES:  # each holds an inotify instance (128 per user)
                _indexes.pop(next(iter(_indexes))).close()
            found = _indexes[root] = RepoIndex(root)
        return found


def nested_repositories(root: Path) -> list[Path]:
    """Every ``.git`` below ``root`` known to the index (the first call walks the tree)."""
    found = index(root)
    with found.lock:
        if not found.scanned:
            found.refresh()
        return [Path(path) for path in sorted(found.repos)]


def start_watching(workspace_roots: Iterable[Path]) -> None:
    """Walk the roots in a daemon thread at session start, so the first command need not wait."""
    for root in workspace_roots:
        threading.Thread(target=nested_repositories, args=(root,), daemon=True, name="repo-index").start()


def _enclosing_repository(root: Path) -> Path | None:
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder / ".git"
    return None


def git_paths(workspace_roots: Iterable[Path]) -> list[Path]:
    """Hook folders and included config files of the workspace's repositories, the user's and the
    system's git config files, and the git directories ``.git`` files point at."""
    users = user_config_files()
    paths: list[Path] = list(users)
    repos: list[Path] = []
    for root in workspace_roots:
        if enclosing := _enclosing_repository(root):
            repos.append(enclosing)
        repos += nested_repositories(root)
    for dot_git in dict.fromkeys(repos):
        targets = git_dirs(dot_git)
        paths += [target for target in targets if target != dot_git]
        paths += hooks_and_includes(dot_git.parent, [*users, *repository_files(dot_git)])
    return paths


def protected_paths(workspace_roots: Iterable[Path], all_roots: Iterable[Path]) -> list[Path]:
    """Everything this module keeps read-only that lies inside a writable root."""
    workspace, roots = list(workspace_roots), list(all_roots)
    candidates = [*home_paths(workspace), *git_paths(workspace)]
    for root in workspace:
        candidates += nested_repositories(root)
    # A root that is one of them or lies inside one (the agent started in ~/.claude, a worktree under
    # the agent's home) stays writable: the user chose it. Such a folder is then left as it is (it is
    # writable only where another root, such as /tmp, holds it).
    return [
        path
        for path in dict.fromkeys(candidates)
        if _within(path, roots) and not any(_within(root, [path]) for root in roots)
    ]


def guarded_part(path: Path, workspace_roots: Iterable[Path], all_roots: Iterable[Path]) -> Path | None:
    """The path of :func:`protected_paths` that ``path`` (resolved) is or lies in."""
    for protected in protected_paths(workspace_roots, all_roots):
        for candidate in (protected, Path(os.path.realpath(protected))):
            if path == candidate or path.is_relative_to(candidate):
                return candidate
    return None


def mount_paths(paths: Iterable[Path], roots: Iterable[Path]) -> list[str]:
    """The ones a read-only bind can cover: existing, resolved (a symlink's target, if it lies
    inside a writable root)."""
    roots = list(roots)
    found: list[str] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if os.path.exists(real) and _within(real, roots):
            found.append(str(real))
    return list(dict.fromkeys(found))


def _fingerprint(path: Path) -> tuple | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if os.path.islink(path):
        return ("link", os.readlink(path))
    return ("entry", info.st_dev, info.st_ino)


def _placed(path: Path, roots: Iterable[Path]) -> tuple | None:
    """Where a file bound read-only sits: its folders from the writable root down (a bound file
    cannot be replaced, but its folder can be renamed away and made again); None when missing.
    The file's own inode is left out: an editor saving it makes a new one."""
    root = next((r for r in roots if _within(path, [r])), None)
    if root is None or not os.path.lexists(path):
        return None
    chain = []
    for folder in [*reversed(path.relative_to(root).parents)][1:]:
        with contextlib.suppress(OSError):
            info = os.lstat(root / folder)
            chain.append((info.st_dev, info.st_ino))
    return ("placed", tuple(chain))


@dataclass
class Guard:
    """One sandboxed command's protections: what to audit when it ends, and what was refused."""

    workspace_roots: tuple[Path, ...]
    roots: tuple[Path, ...]
    files: tuple[Path, ...] = ()  # what the agent runs outside the sandbox (hooks' scripts)
    audited: dict[Path, tuple | None] = field(default_factory=dict)
    placed: dict[Path, tuple | None] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)

    def before(self) -> None:
        at_roots = [root / name for root in self.workspace_roots for name in PROTECTED_NAMES]
        for path in [*protected_paths(self.workspace_roots, self.roots), *at_roots]:
            fingerprint = _fingerprint(path)
            if fingerprint is None or fingerprint[0] == "link":
                self.audited[path] = fingerprint
        for path in self.files:
            self.placed[path] = _placed(path, self.roots)

    def after(self) -> None:
        folder = agent_home() / QUARANTINE
        for path, was in self.placed.items():
            now = _placed(path, self.roots)
            if was is not None and now is not None and now != was:
                where = quarantine(path, folder)
                self.refused.append(
                    f"{path} is run outside the sandbox by the agent: the copy made in a replaced folder was undone ({where})"
                )
        for path, was in self.audited.items():
            now = _fingerprint(path)
            if now == was:
                continue
            where = quarantine(path, folder) if now is not None else "removed"
            if was is not None and was[0] == "link":
                with contextlib.suppress(OSError):
                    os.symlink(was[1], path)
            self.refused.append(f"{path} is protected: a change to it was undone ({where})")
        for root in self.workspace_roots:
            found = index(root)
            with found.lock:
                appeared = found.refresh()
            for dot_git in appeared:
                for line in sanitize(dot_git, folder, self._protected):
                    self.refused.append(f"new repository {dot_git.parent}: {line}")
            if found.full and root not in _warned_full:
                _warned_full.add(root)
                self.refused.append(
                    f"{root} has more than {MAX_DIRS} folders: repositories created below the first "
                    f"{MAX_DIRS} are not looked for"
                )

    def _protected(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return not _within(real, self.roots) or any(
            part == ".git" for part in real.relative_to(next(r for r in self.roots if _within(real, [r]))).parts
        )


@contextlib.contextmanager
def guarded(workspace_roots: Iterable[Path], all_roots: Iterable[Path], files: Iterable[Path] = ()) -> Iterator[Guard]:
    """Around one sandboxed command: fingerprints before, undo and report after."""
    guard = Guard(tuple(workspace_roots), tuple(all_roots), tuple(files))
    if not guard.roots:
        yield guard
        return
    guard.before()
    try:
        yield guard
    finally:
        guard.after()


def background_audit(
    workspace_roots: Iterable[Path], all_roots: Iterable[Path], files: Iterable[Path] = ()
) -> Callable[[], list[str]]:
    """A background command's protections: fingerprints now, undo and report when it ends (its
    refusals reach the model with its exit note). What it plants while running is also caught by
    any foreground command that ends meanwhile."""
    guard = Guard(tuple(workspace_roots), tuple(all_roots), tuple(files))
    if not guard.roots:
        return list
    guard.before()

    def after() -> list[str]:
        guard.after()
        return guard.refused

    return after


def home_notice(cwd: Path) -> str | None:
    """Said once when the session starts in the home folder."""
    with contextlib.suppress(OSError):
        if Path(cwd).resolve() == Path.home().resolve():
            names = ", ".join(name for name in HOME_NAMES if os.path.lexists(Path.home() / name))
            return (
                "started in your home folder: sandboxed commands may write here, but shell start-up files, "
                "git and tool config, .ssh, .gnupg, credentials and the agents' own folders stay read-only"
                + (f" ({names})" if names else "")
            )
    return None

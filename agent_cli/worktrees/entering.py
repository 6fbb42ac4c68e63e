"""What a front end calls to start a session in a worktree, and to leave one.

``open_worktree(name, base, cwd)`` finds the worktree NAME of the repository ``cwd`` is in, or
creates it (a generated name when None), and says where the session starts: the same folder
inside it the user was in. :func:`enter_worktree` is the short form for front ends that only need
that path (the Claude SDK front end). :func:`leave_worktree` applies the rule when a session ends:
a worktree with no change and no commit is removed with its branch; any other is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.paths import agent_home as default_agent_home
from agent_cli.worktrees.git import run
from agent_cli.worktrees.setup import copy_named_files
from agent_cli.worktrees.staleness import aside_warning, set_aside, stale_reason
from agent_cli.worktrees.store import (
    GitError,
    Worktree,
    WorktreeState,
    check_name,
    containing,
    create,
    find,
    generated_name,
    hold,
    in_use,
    remove,
    repository_of,
    state,
)

ALWAYS_COPIED = (".claude/settings.local.json",)  # git ignores it; it holds the user's rules for the project
__all__ = ["Entered", "GitError", "Left", "enter_worktree", "leave_worktree", "open_worktree", "return_to", "set_up"]


@dataclass
class Entered:
    worktree: Worktree
    cwd: Path  # where the session starts: the folder inside the worktree the user was in
    created: bool  # False: an existing worktree was resumed
    warnings: list[str] = field(default_factory=list)
    source: Path | None = None  # the checkout it was made from (ignored files are copied from there)

    def line(self) -> str:
        verb = "created" if self.created else "resumed"
        return f"{verb} worktree {self.worktree.name} on branch {self.worktree.branch} at {self.worktree.path}"


@dataclass(frozen=True)
class Left:
    worktree: Worktree
    removed: bool
    state: WorktreeState | None
    message: str


def open_worktree(
    name: str | None = None, base: str | None = None, cwd: Path | None = None, agent_home: Path | None = None
) -> Entered:
    """The worktree NAME (created from ``base``, default HEAD, when it does not exist; a generated
    name when None) of the repository ``cwd`` is in. A stale one (worktrees/staleness.py) is never
    resumed: it is set aside and made fresh, and ``warnings`` says so. GitError or ValueError say what
    went wrong."""
    home = Path(agent_home or default_agent_home())
    cwd = Path(cwd or Path.cwd()).resolve()
    repository = repository_of(cwd)
    relative = cwd.relative_to(repository.toplevel)
    warnings: list[str] = []
    if name is not None:
        check_name(name)
        found = find(home, repository.main, name)
        reason = stale_reason(found, repository) if found is not None and found.exists else None
        if reason is not None and found is not None:  # never used: set aside, made fresh below
            warnings.append(aside_warning(found, reason, set_aside(home, found)))
            run(repository.main, "worktree", "prune", check=False)
        elif found is not None and found.exists:
            if base is not None:
                raise GitError(f"worktree {name} exists already; --base applies only to a new one")
            hold(home, found)  # in use by this process: no other agent removes it meanwhile
            return Entered(found, _inside(found.path, relative), created=False, source=repository.toplevel)
        elif found is not None:  # its folder was deleted by hand: forget it, then make it again
            remove(home, found)
    name = name or generated_name()
    worktree, made = create(home, repository, name, base)
    hold(home, worktree)
    return Entered(
        worktree, _inside(worktree.path, relative), created=True, warnings=warnings + made, source=repository.toplevel
    )


def enter_worktree(name: str | None = None, base: str | None = None, cwd: Path | None = None) -> Path:
    """Create or resume the worktree NAME and return the folder to start the session in."""
    return open_worktree(name, base, cwd).cwd


def return_to(recorded: dict[str, str] | None, cwd: str, agent_home: Path | None = None) -> Entered | None:
    """The worktree a session's file records (its header's ``worktree``, and ``cwd``), to resume
    it there: as it is, or made again (from its kept branch, or anew) when it was removed since.
    None when the session did not run in one. GitError or ValueError when it cannot be made."""
    if not recorded or not recorded.get("name") or not recorded.get("repository"):
        return None
    home = Path(agent_home or default_agent_home())
    folder = Path(cwd)
    found = containing(home, folder)
    if found is not None and found.exists and stale_reason(found, repository_of(found.repository)) is None:
        hold(home, found)  # in use: no other agent removes it meanwhile
        return Entered(found, folder if folder.is_dir() else found.path, created=False)
    return open_worktree(recorded["name"], None, Path(recorded["repository"]), home)  # a stale one is set aside


def set_up(entered: Entered, copy: tuple[str, ...]) -> list[str]:
    """Copy the ignored files ``copy`` names into a new worktree, and the user's local permission
    rules (their deny rules must hold there too); returns lines for the user."""
    if not entered.created or entered.source is None:
        return []
    always = tuple(
        name for name in ALWAYS_COPIED if (entered.source / name).is_file() and ignored(entered.source, name)
    )
    copied, warnings = copy_named_files(entered.source, entered.worktree.path, always + copy)
    lines = [f"copied into the worktree: {', '.join(copied)}"] if copied else []
    return lines + warnings


def ignored(checkout: Path, name: str) -> bool:
    """Whether git ignores ``name`` in ``checkout`` (copied, it is no change of the worktree)."""
    return run(checkout, "check-ignore", "--quiet", "--", name, check=False).returncode == 0


def leave_worktree(worktree: Worktree | Path, *, remove_changed: bool = False, agent_home: Path | None = None) -> Left:
    """End of a session in ``worktree`` (or the folder of one): removed with its branch when it
    has no change and no commit since it was made (or ``remove_changed``: the user said so);
    otherwise kept, and the message says where and on which branch."""
    home = Path(agent_home or default_agent_home())
    if isinstance(worktree, Path):
        found = containing(home, worktree)
        if found is None:
            raise GitError(f"{worktree} is not one of the agent's worktrees")
        worktree = found
    if not worktree.exists:
        return Left(worktree, True, None, f"worktree {worktree.name} is gone already")
    current = state(worktree)
    if in_use(home, worktree):  # another session works there too: it decides when it ends
        return Left(worktree, False, current, f"kept worktree {worktree.name}: another running agent works in it")
    if current.clean or remove_changed:
        return Left(worktree, True, current, remove(home, worktree, force=remove_changed))
    return Left(
        worktree,
        False,
        current,
        f"kept worktree {worktree.name} ({current.summary()}): {worktree.path}, branch {worktree.branch}",
    )


def _inside(root: Path, relative: Path) -> Path:
    folder = root / relative
    return folder if folder.is_dir() else root

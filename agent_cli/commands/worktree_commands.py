"""``/worktree`` and ``/rename``: several sessions side by side, each in a worktree of its own.

``/worktree`` shows the worktree this session runs in and the repository's others; ``/worktree
NAME`` goes on in worktree NAME (created from HEAD when new: ignored files of ``[worktree] copy``
copied, its ``setup`` command run there first) as a new session, which only a
front end can do (a ``CommandAction``). Making a new one writes the repository's ``.git`` and a
folder under the agent's home, so it is decided as a model's write of those would be
(command_writes.py). ``/rename NAME`` names this session (``agent resume NAME``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.command_writes import approve_writes
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.config import Config, ConfigError, load_config
from agent_cli.store.names import session_names, set_session_name
from agent_cli.trust.inventory import take_inventory
from agent_cli.trust.store import TrustStore
from agent_cli.worktrees.entering import GitError, open_worktree, set_up
from agent_cli.worktrees.settings import WorktreeSettings
from agent_cli.worktrees.store import (
    BRANCH_PREFIX,
    check_name,
    containing,
    find,
    list_worktrees,
    repository_folder,
    repository_of,
    state,
)


def config_in(config: Config, folder: Path) -> Config:
    """``config`` as if the session had started in ``folder``: its project config read there, the
    same ``-c`` and flags (a worktree's session, ``/worktree``)."""
    overrides = [layer.origin.removeprefix("-c ") for layer in config.layers if layer.kind == "override"]
    flags = {key: value for layer in config.layers if layer.kind == "flags" for key, value in layer.table.items()}
    try:
        fresh = load_config(folder, overrides, flags)
    except ConfigError:
        return replace(config, cwd=folder)
    return replace(
        fresh,
        model=config.model,
        context_window=config.context_window,
        plugin_dirs=config.plugin_dirs,
        trust_repository=config.trust_repository,
    )


def carry_trust(source: Config, target: Config) -> bool:
    """A worktree holds what the checkout it was made from holds: if the user trusted that content
    there, it is trusted in ``target``'s folder too (a changed content is a new question)."""
    mine = take_inventory(target)
    if not mine.items:
        return False
    theirs = take_inventory(source)
    store = TrustStore(target.agent_home)
    if theirs.digest != mine.digest or store.answer(theirs.folder, theirs.digest) is not True:
        return False
    if store.answer(mine.folder, mine.digest) is None:
        store.record(mine.folder, mine.digest, True)
    return True


def describe_worktrees(inv: Invocation) -> str:
    """This session's worktree and the repository's others, with their changes (runs git)."""
    config = inv.session.config
    home = config.agent_home
    here = containing(home, config.cwd)
    lines = []
    if here is not None:
        lines.append(f"this session runs in worktree {here.name}: branch {here.branch}, {here.path}")
    else:
        lines.append("this session runs in the checkout itself, not in a worktree")
    try:
        main = repository_of(config.cwd).main
    except GitError as exc:
        return f"{lines[0]}\n({exc})"
    others = [w for w in list_worktrees(home, main) if here is None or w.name != here.name]
    for worktree in others:
        try:
            shown = state(worktree).summary() if worktree.exists else "folder gone"
        except GitError as exc:
            shown = str(exc)
        lines.append(f"  {worktree.name}  {worktree.branch}  {shown}")
    if not others:
        lines.append("no other worktree of this repository")
    lines.append("/worktree NAME goes on in worktree NAME (made from HEAD when new)")
    return "\n".join(lines)


async def worktree_command(inv: Invocation) -> None:
    if not inv.args:
        inv.emit(ev.Notice(await asyncio.to_thread(describe_worktrees, inv), title="worktree"))
        return
    config = inv.session.config
    name = inv.args.strip()
    await approve_new_worktree(inv, name)
    try:
        entered = await asyncio.to_thread(open_worktree, name, None, config.cwd, config.agent_home)
    except (GitError, ValueError) as exc:
        raise InputError(f"/worktree: {exc}") from None
    lines = [entered.line(), *entered.warnings]
    settings = WorktreeSettings.from_raw(config.raw)  # without the repository's own until it is trusted
    lines += await asyncio.to_thread(set_up, entered, settings.copy)
    await asyncio.to_thread(carry_trust, config, config_in(config, entered.cwd))
    inv.emit(ev.Notice("\n".join(lines), title="worktree"))
    setup = settings.setup if entered.created and settings.setup else None  # the front end runs it there first
    inv.emit(ev.CommandAction("worktree", str(entered.cwd), then=setup))


async def approve_new_worktree(inv: Invocation, name: str) -> None:
    """A worktree that does not exist yet is made only as a write of its branch and folder would be."""
    config = inv.session.config
    try:
        check_name(name)
        repository = await asyncio.to_thread(repository_of, config.cwd)
    except (GitError, ValueError) as exc:
        raise InputError(f"/worktree: {exc}") from None
    found = find(config.agent_home, repository.main, name)
    if found is not None and found.exists:
        return  # resumed: nothing is made
    folder = repository_folder(config.agent_home, repository.main) / name
    git_dir = repository.main / ".git"
    branch = BRANCH_PREFIX + name
    writes = [
        (git_dir / "worktrees" / name / "gitdir", f"git worktree add -b {branch} {folder}\n"),
        (folder / ".git", f"gitdir: {git_dir / 'worktrees' / name}\n"),
    ]
    await approve_writes(inv.session, inv.emit, f"/worktree {name}", writes)


async def rename_command(inv: Invocation) -> None:
    session = inv.session
    home = session.config.agent_home
    if not inv.args:
        name = session_names(home).get(session.id)
        shown = f"this session is named {name!r}" if name else "this session has no name"
        inv.emit(ev.Notice(f"{shown}\nname it with /rename NAME; resume it by name: agent resume NAME", title="rename"))
        return
    try:
        await asyncio.to_thread(set_session_name, home, session.id, inv.args)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    name = " ".join(inv.args.split())
    inv.emit(ev.Notice(f"this session is now named {name!r}; resume it with `agent resume {name}`", title="rename"))

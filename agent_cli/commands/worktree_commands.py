"""``/worktree`` and ``/rename``: several sessions side by side, each in a worktree of its own.

``/worktree`` shows the worktree this session runs in and the repository's others; ``/worktree
NAME`` goes on in worktree NAME (created from HEAD when new: ignored files of ``[worktree] copy``
copied, its ``setup`` command sent there first as a ``!command``) as a new session, which only a
front end can do (a ``CommandAction``). ``/rename NAME`` names this session (``agent resume NAME``).
"""

from __future__ import annotations

import asyncio

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.session.names import session_names, set_session_name
from agent_cli.worktrees.entering import GitError, open_worktree, set_up
from agent_cli.worktrees.settings import WorktreeSettings
from agent_cli.worktrees.store import containing, list_worktrees, repository_of, state


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
    try:
        entered = await asyncio.to_thread(open_worktree, name, None, config.cwd, config.agent_home)
    except (GitError, ValueError) as exc:
        raise InputError(f"/worktree: {exc}") from None
    lines = [entered.line(), *entered.warnings]
    settings = WorktreeSettings.from_raw(config.raw)  # without the repository's own until it is trusted
    lines += await asyncio.to_thread(set_up, entered, settings.copy)
    inv.emit(ev.Notice("\n".join(lines), title="worktree"))
    setup = f"!{settings.setup}" if entered.created and settings.setup else None
    inv.emit(ev.CommandAction("worktree", str(entered.cwd), then=setup))


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

"""Worktrees for editor sessions: ``session/new`` with ``_meta: {"worktree": NAME | true,
"worktreeBase": REF}`` starts the session in the git worktree NAME (a generated name for ``true``),
as ``agent --worktree`` does. Its set-up command runs before the first prompt; when the agent
closes, a worktree with no change is removed with its branch, any other is kept."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from acp import RequestError

from agent_cli.paths import agent_home
from agent_cli.store.catalog import find_session
from agent_cli.store.rollout import RolloutError, read_header
from agent_cli.worktrees.entering import Entered, GitError, leave_worktree, open_worktree, return_to, set_up
from agent_cli.worktrees.settings import WorktreeSettings

log = logging.getLogger(__name__)


async def enter_for_session(cwd: Path, worktree: Any, base: Any) -> Entered | None:
    """The worktree the ``_meta`` asks for, or None when it asks for none."""
    if worktree in (None, False):
        return None
    if not (worktree is True or isinstance(worktree, str)) or (base is not None and not isinstance(base, str)):
        raise RequestError.invalid_params({"message": "_meta.worktree is a name or true; worktreeBase a git ref"})
    name = worktree if isinstance(worktree, str) and worktree else None
    try:
        entered = await asyncio.to_thread(open_worktree, name, base, cwd)
    except (GitError, ValueError) as exc:
        raise RequestError.invalid_params({"message": f"worktree: {exc}"}) from None
    log.info("%s", entered.line())
    return entered


def resumed_in(session_id: str, cwd: Path) -> Entered | None:
    """``session/load`` of a session that ran in a worktree: it goes on there (made again if it
    was removed); None for any other (or a file the load itself will refuse)."""
    try:
        header = read_header(find_session(agent_home(), session_id))
        return return_to(header.worktree, header.cwd)
    except (RolloutError, GitError, ValueError) as exc:
        log.warning("session %s: not resumed in its worktree: %s", session_id, exc)
        return None


def set_up_session(entered: Entered, raw: dict[str, Any]) -> str | None:
    """Copy the ignored files ``[worktree] copy`` names; the set-up command to run first, if any."""
    settings = WorktreeSettings.from_raw(raw)
    for line in set_up(entered, settings.copy):
        log.info("%s", line)
    return settings.setup if entered.created and settings.setup else None


def leave(entered: Entered) -> None:
    try:
        log.info("%s", leave_worktree(entered.worktree).message)
    except GitError as exc:
        log.warning("worktree %s: %s", entered.worktree.path, exc)

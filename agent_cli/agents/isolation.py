"""``isolation: worktree`` in an agent file: the subagent works in a git worktree of its own.

The worktree is made from the parent's HEAD before the child starts; the child's commands, patches
and sandbox are rooted there (the parent's checkout is not writable for it). When it ends, a
worktree with no change is removed with its branch; one with changes is kept, and the answer the
parent's model reads names its branch and folder.
"""

from __future__ import annotations

import asyncio
import copy
import re
import secrets
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agent_cli import events as ev
from agent_cli.agents.child import run_child
from agent_cli.agents.definition import AgentDefinition
from agent_cli.agents.task_tool import ChildOutcome
from agent_cli.sandbox.policy import SandboxPolicy
from agent_cli.session.approvals import Approvals
from agent_cli.session.session import Session
from agent_cli.session.state import Emit
from agent_cli.worktrees.entering import Entered, GitError, leave_worktree, open_worktree, set_up
from agent_cli.worktrees.settings import WorktreeSettings

OpenChild = Callable[[Session, AgentDefinition, Path | None, tuple[Path, Path] | None], Session]


def isolated_approvals(
    approvals: Approvals, cwd: Path, writable_roots: tuple[Path, ...], moved: tuple[Path, Path] | None = None
) -> Approvals:
    """The parent's approvals (policy, answers given so far, rules) with the sandbox rooted at the
    worktree ``cwd`` instead of the parent's folder. ``moved``: (the parent's checkout, the
    worktree): the rules written for paths in the checkout apply to the same paths in the worktree
    (a deny rule of the project's settings must hold there too)."""
    isolated = copy.copy(approvals)
    isolated.cwd = cwd
    permissions = copy.copy(approvals.permissions)
    permissions.cwd = cwd
    if moved is not None:
        permissions.rules = [replace(rule, base=_moved(rule.base, *moved)) for rule in permissions.rules]
    isolated.permissions = permissions
    if approvals.sandbox is not None:
        sandbox = approvals.sandbox
        isolated.sandbox = replace(
            SandboxPolicy.create(sandbox.mode, cwd, writable_roots, sandbox.network_access),
            read_only_files=sandbox.read_only_files,
        )
    return isolated


def _moved(base: Path, checkout: Path, worktree: Path) -> Path:
    return worktree / base.relative_to(checkout) if base.is_relative_to(checkout) else base


def worktree_name(agent: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", agent).strip("-")[:40] or "agent"
    return f"{stem}-{secrets.token_hex(3)}"


async def run_isolated(
    parent: Session,
    definition: AgentDefinition,
    description: str,
    prompt: str,
    call_id: str,
    emit: Emit,
    open_child: OpenChild,
) -> ChildOutcome:
    """Run the child in a new worktree; its outcome's answer ends with where its changes are."""
    home = parent.config.agent_home
    try:
        entered: Entered = await asyncio.to_thread(
            open_worktree, worktree_name(definition.name), None, parent.config.cwd, home
        )
    except (GitError, ValueError) as exc:
        return ChildOutcome(status="failed", error=f"isolation: worktree: {exc}")
    await asyncio.to_thread(set_up, entered, WorktreeSettings.from_raw(parent.config.raw).copy)
    outcome: ChildOutcome | None = None
    try:
        moved = (entered.source, entered.worktree.path) if entered.source is not None else None
        child = open_child(parent, definition, entered.cwd, moved)
        outcome = await run_child(parent, child, definition, description, prompt, call_id, emit)
    finally:
        try:
            left = leave_worktree(entered.worktree, agent_home=home)  # quick: git status and rev-list
        except GitError as exc:
            note = (
                f"its worktree {entered.worktree.path} (branch {entered.worktree.branch}) could not be checked: {exc}"
            )
        else:
            if left.removed:
                note = "It changed no file: its worktree was removed."
            else:
                note = (
                    f"Its changes ({left.state.summary() if left.state else 'unknown'}) are on branch "
                    f"{entered.worktree.branch}, in the worktree {entered.worktree.path}."
                )
    emit(ev.Notice(note, title=definition.name))  # the user sees where the changes are, too
    if outcome is None:  # pragma: no cover - run_child returns or raises
        return ChildOutcome(status="failed", error=note)
    if outcome.status == "completed":
        return replace(outcome, final_message=f"{outcome.final_message or ''}\n\n[{note}]".strip())
    return replace(outcome, error=f"{outcome.error or 'failed'} [{note}]")

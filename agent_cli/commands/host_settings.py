"""What a front end changes in how the session's tool calls are allowed: the approval policy, the
sandbox, what is approved for the session and the hooks (``SetApprovalPolicy``, ``SetSandbox``,
``ApproveForSession``, ``AddHooks``). Each applies from the next tool call on, during a turn too:
none of them changes the history, so none waits for the running turn.
"""

from __future__ import annotations

import shlex

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.operations import (
    APPROVAL_POLICIES,
    SANDBOX_MODES,
    AddHooks,
    ApproveForSession,
    SetApprovalPolicy,
    SetSandbox,
)
from agent_cli.permissions.rules import RuleError
from agent_cli.sandbox.policy import SandboxPolicy
from agent_cli.session.session import Emit, Session


def set_approval_policy(session: Session, op: SetApprovalPolicy, emit: Emit) -> None:
    if op.policy not in APPROVAL_POLICIES:
        raise InputError(f"unknown approval policy {op.policy!r}; choose one of: {', '.join(APPROVAL_POLICIES)}")
    session.approvals.set_policy(op.policy)
    emit(ev.Notice(f"approval policy {op.policy} from the next tool call", title="approvals"))


def set_sandbox(session: Session, op: SetSandbox, emit: Emit) -> None:
    if op.mode not in SANDBOX_MODES:
        raise InputError(f"unknown sandbox mode {op.mode!r}; choose one of: {', '.join(SANDBOX_MODES)}")
    config = session.config
    session.approvals.set_sandbox(
        SandboxPolicy.create(op.mode, config.cwd, config.writable_roots, config.network_access)
    )
    emit(ev.Notice(f"sandbox {op.mode} from the next command", title="sandbox"))


def approve_for_session(session: Session, op: ApproveForSession, emit: Emit) -> None:
    given = [what for what in (op.rule, op.command_prefix, op.tools) if what]
    if len(given) != 1:
        raise InputError("approve for the session one thing: a rule, a command prefix or tools")
    if op.withdraw and not op.tools:
        raise InputError("only tools approved for the session can be withdrawn")
    approvals = session.approvals
    if op.tools:
        (approvals.withdraw if op.withdraw else approvals.grant)(op.tools)
        return
    rule = op.rule or f"Bash({prefix_rule(op.command_prefix)})"
    try:
        approvals.permissions.add_session_rule(rule, op.behavior, op.source)
    except RuleError as exc:
        raise InputError(f"not a permission rule: {rule}: {exc}") from None
    emit(ev.Notice(f"{op.behavior} for this session: {rule}", title="permissions"))


def prefix_rule(prefix: tuple[str, ...]) -> str:
    """A command prefix as a rule's specifier: every command that starts with these words."""
    if not all(word.strip() for word in prefix):
        raise InputError(f"a command prefix needs words: {list(prefix)!r}")
    return f"{shlex.join(prefix)}:*"


def add_hooks(session: Session, op: AddHooks, emit: Emit) -> None:
    session.hooks.register(op.hooks)

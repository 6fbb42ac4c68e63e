"""``/undo``, ``/rewind`` and ``/fork``: taking turns back (session/checkpointing.py does the work).

``/undo`` restores the files to the checkpoint before the last turn that changed them, after
showing the diff and asking. ``/rewind N [both|conversation|code]`` goes back to the N-th prompt
of the conversation: its files, its conversation (the prompt comes back for editing) or both.
``/fork [N]`` copies the conversation (up to before prompt N) into a new session and switches to it.
"""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.checkpoints.gitcmd import CheckpointError
from agent_cli.checkpoints.ledger import Checkpoint
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.operations import REWIND_PARTS, Fork, Rewind, is_rewind_part
from agent_cli.session.checkpointing import PromptEntry
from agent_cli.session.forking import fork_session
from agent_cli.session.session import Emit, Session
from agent_cli.store.replay import shown_prompt
from agent_cli.store.rollout import RolloutError

MODES = REWIND_PARTS
YES = "--yes"
NOTHING_TO_REWIND = "nothing to rewind: no prompt since the start (or the last compaction)"


async def undo_command(inv: Invocation) -> None:
    if inv.args not in ("", YES):
        raise InputError(f"/undo takes no arguments except {YES} (restore without asking)")
    tracker = inv.session.checkpoints
    checkpoints = tracker.ledger.last()
    if not checkpoints:
        inv.emit(ev.Notice("nothing to undo: no turn of this session changed files since the last undo", title="undo"))
        return
    restored = await restore_code(inv.session, inv.emit, checkpoints, "undo", tell_model=True, ask=inv.args != YES)
    if restored is not None:
        inv.emit(ev.Rewound("undo", tuple(restored[0]), tuple(restored[1])))


async def restore_code(
    session: Session, emit: Emit, checkpoints: list[Checkpoint], what: str, tell_model: bool, ask: bool
) -> tuple[list[str], list[str]] | None:
    """Plan, show, ask, restore (``what``: undo or rewind). Returns (restored paths, conflicts),
    or None when the user said no."""
    tracker = session.checkpoints
    try:
        plan = await tracker.plan(checkpoints)
    except CheckpointError as exc:
        raise InputError(f"/{what}: {exc}") from None
    turns = ", ".join(repr(shown_prompt(c.prompt)[:60]) for c in checkpoints)
    if not plan.changes:
        note = "the files are already as they were before " + turns
        if plan.conflicts:
            note += f"\nchanged by hand since, left as they are: {', '.join(plan.conflicts)}"
        emit(ev.Notice(note, title=what))
        await tracker.restore(plan, checkpoints, tell_model=False)  # nothing left to take back there
        return [], plan.conflicts
    emit(ev.Notice(f"{what}: taking back {turns}\n{plan.summary()}\n\n{plan.diff}", title=what))
    if ask:
        if not session.approvals.interactive:
            raise InputError(
                f"/{what} asks before it restores files; add {YES} to restore without asking, or use `agent exec undo`"
            )
        count = len(plan.changes)
        question = f"restore {'this file' if count == 1 else f'these {count} files'} to before {turns}"
        reason = "files changed by hand since are left as they are" if plan.conflicts else None
        decision = await session.approvals.request_decision(what, what, question, reason, emit)
        if decision.decision == "deny":
            emit(ev.Notice("nothing was restored", title=what))
            return None
    try:
        restored = await tracker.restore(plan, checkpoints, tell_model)
    except CheckpointError as exc:
        raise InputError(f"/{what}: {exc}") from None
    lines = [f"restored {len(restored)} file(s): {', '.join(restored)}"]
    if plan.conflicts:
        lines.append(f"not restored, changed by hand since the turn: {', '.join(plan.conflicts)}")
    if plan.skipped:
        lines.append(f"not restored, over the size limit: {', '.join(plan.skipped)}")
    emit(ev.Notice("\n".join(lines), title=what))
    return restored, plan.conflicts


def prompt_list(entries: list[PromptEntry]) -> str:
    lines = [
        f"{number}. {entry.shown.splitlines()[0][:70] if entry.shown.strip() else '(empty)'}  ({entry.changes()})"
        for number, entry in enumerate(entries, start=1)
    ]
    return "\n".join(lines)


def rewind_form(args: str) -> Rewind | None:
    """``/rewind N [both|conversation|code] [--yes]`` as an operation (``-N``: N prompts back);
    None when it is not that."""
    words = args.split()
    confirmed = bool(words) and words[-1] == YES
    words = words[:-1] if confirmed else words
    if len(words) not in (1, 2) or not words[0].removeprefix("-").isdigit():
        return None
    part = words[1] if len(words) == 2 else "both"
    return Rewind(int(words[0]), part, confirmed) if is_rewind_part(part) else None


async def rewind_command(inv: Invocation) -> None:
    session = inv.session
    entries = session.checkpoints.prompts()
    if not entries:
        inv.emit(ev.Notice(NOTHING_TO_REWIND, title="rewind"))
        return
    if not inv.args:
        if session.approvals.interactive:
            inv.emit(ev.CommandAction("rewind"))  # the TUI's picker
        else:
            inv.emit(
                ev.Notice(prompt_list(entries) + f"\n\ngo back with /rewind N [{'|'.join(MODES)}]", title="rewind")
            )
        return
    if (op := rewind_form(inv.args)) is None:
        words = inv.args.removesuffix(YES).split()
        if len(words) == 1 or (len(words) == 2 and words[1] in MODES):
            raise InputError(f"/rewind: choose a prompt from 1 to {len(entries)}")
        raise InputError(f"usage: /rewind N [{'|'.join(MODES)}]")
    await rewind(session, op, inv.emit)


async def rewind(session: Session, op: Rewind, emit: Emit) -> None:
    """Back to before prompt ``op.prompt``: its files, its conversation or both."""
    tracker = session.checkpoints
    entries = tracker.prompts()
    if not entries:
        emit(ev.Notice(NOTHING_TO_REWIND, title="rewind"))
        return
    if not is_rewind_part(op.part):
        raise InputError(f"usage: /rewind N [{'|'.join(MODES)}]")
    number = op.prompt if op.prompt > 0 else len(entries) + 1 + op.prompt  # -1: the last prompt
    if not 1 <= number <= len(entries):
        raise InputError(f"/rewind: choose a prompt from 1 to {len(entries)}")
    entry = entries[number - 1]
    restored: list[str] = []
    conflicts: list[str] = []
    if op.part in ("code", "both"):
        checkpoints = tracker.ledger.since_prompt(entry.index, session.compaction.count)
        if checkpoints:
            outcome = await restore_code(
                session, emit, checkpoints, "rewind", tell_model=op.part == "code", ask=not op.confirmed
            )
            if outcome is None:
                return
            restored, conflicts = outcome
        else:
            emit(ev.Notice("no file changes to take back since that prompt", title="rewind"))
    prompt = None
    if op.part in ("conversation", "both"):
        prompt = session.rewind(entry.index)
        emit(
            ev.Notice(f"the conversation is back before prompt {number}; it is in the composer to edit", title="rewind")
        )
    emit(ev.Rewound(op.part, tuple(restored), tuple(conflicts), prompt, len(session.history)))


def fork_form(args: str) -> Fork | None:
    """``/fork`` or ``/fork N`` as an operation."""
    if not args:
        return Fork()
    return Fork(int(args)) if args.isdigit() else None


async def fork_command(inv: Invocation) -> None:
    if (op := fork_form(inv.args)) is None:
        count = len(inv.session.checkpoints.prompts())
        raise InputError(f"/fork takes a prompt number from 1 to {count} (or nothing: the whole conversation)")
    fork(inv.session, op, inv.emit)


def fork(session: Session, op: Fork, emit: Emit) -> None:
    """The conversation (up to before prompt ``op.prompt``) as a new session file, to switch to."""
    entries = session.checkpoints.prompts()
    length = None
    if op.prompt is not None:
        if not 1 <= op.prompt <= len(entries):
            raise InputError(
                f"/fork takes a prompt number from 1 to {len(entries)} (or nothing: the whole conversation)"
            )
        length = entries[op.prompt - 1].index
    if not len(session.history):
        raise InputError("/fork: nothing to fork yet")
    try:
        path = fork_session(session, length)
    except (RolloutError, OSError) as exc:
        raise InputError(f"/fork: {exc}") from None
    emit(ev.Notice(f"forked into a new session; the original stays as it was\n{path}", title="fork"))
    emit(ev.CommandAction("resume", str(path)))

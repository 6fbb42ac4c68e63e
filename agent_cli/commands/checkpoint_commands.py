"""``/undo``, ``/rewind`` and ``/fork``: taking turns back (session/checkpointing.py does the work).

``/undo`` restores the files to the checkpoint before the last turn that changed them, after
showing the diff and asking. ``/rewind N [both|conversation|code]`` goes back to the N-th prompt
of the conversation: its files, its conversation (the prompt comes back for editing) or both.
``/fork [N]`` copies the conversation (up to before prompt N) into a new session and switches to it.
"""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.checkpoints.gitcmd import CheckpointError
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.session.checkpointing import PromptEntry
from agent_cli.session.forking import fork_session
from agent_cli.store.replay import shown_prompt
from agent_cli.store.rollout import RolloutError

MODES = ("both", "conversation", "code")
YES = "--yes"


async def undo_command(inv: Invocation) -> None:
    if inv.args not in ("", YES):
        raise InputError(f"/undo takes no arguments except {YES} (restore without asking)")
    tracker = inv.session.checkpoints
    checkpoints = tracker.ledger.last()
    if not checkpoints:
        inv.emit(ev.Notice("nothing to undo: no turn of this session changed files since the last undo", title="undo"))
        return
    restored = await restore_code(inv, checkpoints, "undo", tell_model=True, ask=inv.args != YES)
    if restored is not None:
        inv.emit(ev.Rewound("undo", tuple(restored[0]), tuple(restored[1])))


async def restore_code(inv: Invocation, checkpoints, what: str, tell_model: bool, ask: bool):
    """Plan, show, ask, restore. Returns (restored paths, conflicts), or None when the user said no."""
    tracker = inv.session.checkpoints
    try:
        plan = await tracker.plan(checkpoints)
    except CheckpointError as exc:
        raise InputError(f"/{inv.name}: {exc}") from None
    turns = ", ".join(repr(shown_prompt(c.prompt)[:60]) for c in checkpoints)
    if not plan.changes:
        note = "the files are already as they were before " + turns
        if plan.conflicts:
            note += f"\nchanged by hand since, left as they are: {', '.join(plan.conflicts)}"
        inv.emit(ev.Notice(note, title=what))
        await tracker.restore(plan, checkpoints, tell_model=False)  # nothing left to take back there
        return [], plan.conflicts
    inv.emit(ev.Notice(f"{what}: taking back {turns}\n{plan.summary()}\n\n{plan.diff}", title=what))
    if ask:
        session = inv.session
        if not session.approvals.interactive:
            raise InputError(
                f"/{inv.name} asks before it restores files; add {YES} to restore without asking, "
                "or use `agent exec undo`"
            )
        count = len(plan.changes)
        question = f"restore {'this file' if count == 1 else f'these {count} files'} to before {turns}"
        reason = "files changed by hand since are left as they are" if plan.conflicts else None
        decision = await session.approvals.request_decision(what, what, question, reason, inv.emit)
        if decision.decision == "deny":
            inv.emit(ev.Notice("nothing was restored", title=what))
            return None
    try:
        restored = await tracker.restore(plan, checkpoints, tell_model)
    except CheckpointError as exc:
        raise InputError(f"/{inv.name}: {exc}") from None
    lines = [f"restored {len(restored)} file(s): {', '.join(restored)}"]
    if plan.conflicts:
        lines.append(f"not restored, changed by hand since the turn: {', '.join(plan.conflicts)}")
    if plan.skipped:
        lines.append(f"not restored, over the size limit: {', '.join(plan.skipped)}")
    inv.emit(ev.Notice("\n".join(lines), title=what))
    return restored, plan.conflicts


def prompt_list(entries: list[PromptEntry]) -> str:
    lines = [
        f"{number}. {entry.shown.splitlines()[0][:70] if entry.shown.strip() else '(empty)'}  ({entry.changes()})"
        for number, entry in enumerate(entries, start=1)
    ]
    return "\n".join(lines)


def parse_rewind(args: str, count: int) -> tuple[int, str]:
    words = args.split()
    mode = "both"
    if len(words) == 2 and words[1] in MODES:
        mode = words[1]
    elif len(words) != 1:
        raise InputError(f"usage: /rewind N [{'|'.join(MODES)}]")
    if not words[0].isdigit() or not 1 <= int(words[0]) <= count:
        raise InputError(f"/rewind: choose a prompt from 1 to {count}")
    return int(words[0]), mode


async def rewind_command(inv: Invocation) -> None:
    session = inv.session
    tracker = session.checkpoints
    entries = tracker.prompts()
    if not entries:
        inv.emit(ev.Notice("nothing to rewind: no prompt since the start (or the last compaction)", title="rewind"))
        return
    if not inv.args:
        if session.approvals.interactive:
            inv.emit(ev.CommandAction("rewind"))  # the TUI's picker
        else:
            inv.emit(
                ev.Notice(prompt_list(entries) + f"\n\ngo back with /rewind N [{'|'.join(MODES)}]", title="rewind")
            )
        return
    yes = inv.args.split()[-1] == YES
    number, mode = parse_rewind(inv.args.removesuffix(YES).strip() if yes else inv.args, len(entries))
    entry = entries[number - 1]
    restored: list[str] = []
    conflicts: list[str] = []
    if mode in ("code", "both"):
        checkpoints = tracker.ledger.since_prompt(entry.index, session.compaction.count)
        if checkpoints:
            outcome = await restore_code(inv, checkpoints, "rewind", tell_model=mode == "code", ask=not yes)
            if outcome is None:
                return
            restored, conflicts = outcome
        else:
            inv.emit(ev.Notice("no file changes to take back since that prompt", title="rewind"))
    prompt = None
    if mode in ("conversation", "both"):
        prompt = session.rewind(entry.index)
        inv.emit(
            ev.Notice(f"the conversation is back before prompt {number}; it is in the composer to edit", title="rewind")
        )
    inv.emit(ev.Rewound(mode, tuple(restored), tuple(conflicts), prompt, len(session.history)))


async def fork_command(inv: Invocation) -> None:
    session = inv.session
    entries = session.checkpoints.prompts()
    length = None
    if inv.args:
        if not inv.args.isdigit() or not 1 <= int(inv.args) <= len(entries):
            raise InputError(
                f"/fork takes a prompt number from 1 to {len(entries)} (or nothing: the whole conversation)"
            )
        length = entries[int(inv.args) - 1].index
    if not len(session.history):
        raise InputError("/fork: nothing to fork yet")

    try:
        path = fork_session(session, length)
    except (RolloutError, OSError) as exc:
        raise InputError(f"/fork: {exc}") from None
    inv.emit(ev.Notice(f"forked into a new session; the original stays as it was\n{path}", title="fork"))
    inv.emit(ev.CommandAction("resume", str(path)))

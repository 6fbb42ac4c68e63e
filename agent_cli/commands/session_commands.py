"""Commands that change the session: ``/model``, ``/mode``, ``/new``, ``/resume``, ``/quit``.

``/model NAME`` and ``/mode NAME`` are the operations ``SetModel`` and ``SetMode`` (operations.py):
:func:`set_model` and :func:`set_mode` apply them, whether typed or sent by a front end.

Model and mode changes are appended to the history as developer fragments, never edited into the
system prompt, so every request's prefix stays byte-identical to the one before.
"""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.commands.model_check import model_choices, unknown_model_reason
from agent_cli.context.modes import mode_change_fragment
from agent_cli.context.prompts import prompt_library
from agent_cli.items import Message, developer
from agent_cli.operations import MODES, SetMode, SetModel, is_mode
from agent_cli.session.session import Emit, Session

MODE_SUMMARY = "agent: every tool · ask: read-only tools · plan: read-only tools and update_plan"


def model_form(args: str) -> SetModel | None:
    """``/model NAME`` as an operation; None for anything else (the command says what it wants)."""
    return SetModel(args, verify=True) if len(args.split()) == 1 else None


def mode_form(args: str) -> SetMode | None:
    mode = args.strip().lower()
    return SetMode(mode) if is_mode(mode) else None


async def model_command(inv: Invocation) -> None:
    session = inv.session
    model = inv.args
    if not model and inv.front_end is not None:  # the TUI: pick from what the provider serves
        model = await inv.front_end.pick_model(session.model, await model_choices(session)) or ""
        if not model or model == session.model:
            return
    if not model:
        inv.emit(ev.Notice(f"{session.model} via {session.config.provider.id}\nswitch with /model NAME", title="model"))
        return
    await set_model(session, SetModel(model, verify=True), inv.emit)


async def set_model(session: Session, op: SetModel, emit: Emit) -> None:
    """Switch to ``op.model`` from the next request on; the model reads the change as a fragment."""
    model, provider, previous = op.model, session.config.provider.id, session.model
    if len(model.split()) != 1:
        raise InputError("/model takes one model name, e.g. /model gpt-5")
    if model == previous:
        emit(ev.Notice(f"already using {model}", title="model"))
        return
    if op.verify and (unknown := await unknown_model_reason(session, model)) is not None:
        if session.approvals.interactive:
            decision = await session.approvals.request_decision(
                "model", "model", f"switch to {model}", f"{unknown}; switch anyway?", emit
            )
            if decision.decision == "deny":
                emit(ev.Notice(f"kept {previous}", title="model"))
                return
        else:
            emit(ev.Warning(f"{unknown}; switching to it unverified"))
    session.start_context(emit)  # the fragment must come after the initial context
    session.switch_model(model)  # the TUI's /new and /resume keep it: they open the next session on it
    text = prompt_library(session.config.agent_home).render("model_change.md", previous=previous, model=model)
    session.record(developer(text.strip()))
    emit(
        ev.Notice(
            f"{previous} → {model} via {provider} (context window {session.window.tokens:,} tokens)", title="model"
        )
    )
    emit(session.token_count_event())


async def mode_command(inv: Invocation) -> None:
    session = inv.session
    if not inv.args:
        inv.emit(ev.Notice(f"{session.mode} mode\n{MODE_SUMMARY}\nswitch with /mode agent|ask|plan", title="mode"))
        return
    if (op := mode_form(inv.args)) is None:
        raise InputError(f"unknown mode {inv.args!r}; choose one of: {', '.join(MODES)}")
    set_mode(session, op, inv.emit)


def set_mode(session: Session, op: SetMode, emit: Emit) -> None:
    """Switch to ``op.mode`` from the next request on; the model reads the change as a fragment."""
    if not is_mode(op.mode):
        raise InputError(f"unknown mode {op.mode!r}; choose one of: {', '.join(MODES)}")
    if op.mode == session.mode:
        emit(ev.Notice(f"already in {op.mode} mode", title="mode"))
        return
    session.start_context(emit)
    session.switch_mode(op.mode)
    session.record(mode_change_fragment(op.mode, prompt_library(session.config.agent_home)))
    emit(ev.Notice(f"switched to {op.mode} mode ({MODE_SUMMARY})", title="mode"))


async def new_command(inv: Invocation) -> None:
    _no_arguments(inv)
    inv.emit(ev.CommandAction("new"))


async def quit_command(inv: Invocation) -> None:
    _no_arguments(inv)
    inv.emit(ev.CommandAction("quit"))


async def detach_command(inv: Invocation) -> None:
    """``/detach [PROMPT]``: the front end leaves; the session goes on in the per-user host."""
    inv.emit(ev.CommandAction("detach", inv.args or None))


async def copy_command(inv: Invocation) -> None:
    """``/copy``: the last answer, for the front end to put on the clipboard."""
    _no_arguments(inv)
    answers = [
        item.text
        for item in inv.session.history.items
        if isinstance(item, Message) and item.role == "assistant" and item.text.strip()
    ]
    if not answers:
        raise InputError("/copy: there is no answer to copy yet")
    inv.emit(ev.CommandAction("copy", answers[-1]))


RESUME_WHILE_BUSY = "a turn is running: wait for it to end (or press esc to interrupt it), then /resume"


async def resume_command(inv: Invocation) -> None:
    inv.emit(ev.CommandAction("resume", inv.args or None))


def _no_arguments(inv: Invocation) -> None:
    if inv.args:
        raise InputError(f"/{inv.name} takes no arguments")

"""Commands that change the session: ``/model``, ``/mode``, ``/new``, ``/resume``, ``/quit``.

Model and mode changes are appended to the history as developer fragments, never edited into the
system prompt, so every request's prefix stays byte-identical to the one before.
"""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.commands.model_check import model_choices, unknown_model_reason
from agent_cli.context.modes import MODES, mode_change_fragment
from agent_cli.context.prompts import prompt_library
from agent_cli.items import Message, developer

MODE_SUMMARY = "agent: every tool · ask: read-only tools · plan: read-only tools and update_plan"


async def model_command(inv: Invocation) -> None:
    session = inv.session
    provider = session.config.provider.id
    model = inv.args
    if not model and inv.front_end is not None:  # the TUI: pick from what the provider serves
        model = await inv.front_end.pick_model(session.model, await model_choices(session)) or ""
        if not model or model == session.model:
            return
    if not model:
        inv.emit(ev.Notice(f"{session.model} via {provider}\nswitch with /model NAME", title="model"))
        return
    if len(model.split()) != 1:
        raise InputError("/model takes one model name, e.g. /model gpt-5")
    previous = session.model
    if model == previous:
        inv.emit(ev.Notice(f"already using {model}", title="model"))
        return
    if (unknown := await unknown_model_reason(session, model)) is not None:
        if session.approvals.interactive:
            decision = await session.approvals.request_decision(
                "model", "model", f"switch to {model}", f"{unknown}; switch anyway?", inv.emit
            )
            if decision.decision == "deny":
                inv.emit(ev.Notice(f"kept {previous}", title="model"))
                return
        else:
            inv.emit(ev.Warning(f"{unknown}; switching to it unverified"))
    session.start_context(inv.emit)  # the fragment must come after the initial context
    session.switch_model(model)  # the TUI's /new and /resume keep it: they open the next session on it
    text = prompt_library(session.config.agent_home).render("model_change.md", previous=previous, model=model)
    session.record(developer(text.strip()))
    inv.emit(
        ev.Notice(
            f"{previous} → {model} via {provider} (context window {session.window.tokens:,} tokens)", title="model"
        )
    )
    inv.emit(session.token_count_event())


async def mode_command(inv: Invocation) -> None:
    session = inv.session
    if not inv.args:
        inv.emit(ev.Notice(f"{session.mode} mode\n{MODE_SUMMARY}\nswitch with /mode agent|ask|plan", title="mode"))
        return
    mode = inv.args.strip().lower()
    if mode not in MODES:
        raise InputError(f"unknown mode {inv.args!r}; choose one of: {', '.join(MODES)}")
    if mode == session.mode:
        inv.emit(ev.Notice(f"already in {mode} mode", title="mode"))
        return
    session.start_context(inv.emit)
    session.switch_mode(mode)
    session.record(mode_change_fragment(mode, prompt_library(session.config.agent_home)))
    inv.emit(ev.Notice(f"switched to {mode} mode ({MODE_SUMMARY})", title="mode"))


async def new_command(inv: Invocation) -> None:
    _no_arguments(inv)
    inv.emit(ev.CommandAction("new"))


async def quit_command(inv: Invocation) -> None:
    _no_arguments(inv)
    inv.emit(ev.CommandAction("quit"))


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

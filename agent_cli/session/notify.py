"""Codex's ``notify``: a program of the user's, run after each completed turn with the event's
JSON as its last argument (``notify = ["notify-send-wrapper", "--urgent"]`` in config.toml).

The JSON is Codex's: ``{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd",
"input-messages": [...], "last-assistant-message"}``. The program is not waited for by the turn;
it ends with the session (it is killed after :data:`TIMEOUT` seconds, or when the agent ends). A
repository's own ``notify`` runs only once the folder is trusted.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.sandbox.policy import supervised_argv
from agent_cli.session.hook_state import HookState
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.process import communicate_or_kill

TIMEOUT = 30.0


def notify_argv(config: Config, trusted: bool) -> list[str] | None:
    """The configured program and arguments; a repository's only when the folder is trusted."""
    found = None
    for layer in config.layers:
        if "notify" in layer.table and (trusted or layer.kind != "project"):
            found = layer.table["notify"]
    if not isinstance(found, list) or not found or not all(isinstance(part, str) for part in found):
        return None
    return found


def turn_complete_event(turn: TurnContext, prompt: str, answer: str | None) -> dict[str, Any]:
    return {
        "type": "agent-turn-complete",
        "thread-id": turn.session_id,
        "turn-id": str(turn.number),
        "cwd": str(turn.config.cwd),
        "input-messages": [prompt],
        "last-assistant-message": answer,
    }


def after_turn(
    turn: TurnContext,
    hooks: HookState,
    env: dict[str, str] | None,
    trusted: bool,
    prompt: str,
    answer: str | None,
    emit: Emit,
) -> None:
    """Start the notify program for a completed turn (nothing when none is configured), in the
    session's scrubbed environment ``env``; it ends with the session's hook work (``hooks``)."""
    argv = notify_argv(turn.config, trusted)
    if argv is None or turn.agent_name is not None:
        return
    payload = json.dumps(turn_complete_event(turn, prompt, answer))
    hooks.keep(_run([*argv, payload], turn, env, emit))  # it never outlives the session


async def _run(argv: list[str], turn: TurnContext, env: dict[str, str] | None, emit: Emit) -> None:
    try:
        proc = await asyncio.create_subprocess_exec(
            *supervised_argv(argv),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=turn.config.cwd,
            env=dict(os.environ if env is None else env),
            start_new_session=True,
        )
    except OSError as exc:
        emit(ev.Warning(f"notify program `{argv[0]}` could not be started: {exc.strerror or exc}"))
        return
    try:
        _, err = await communicate_or_kill(proc, TIMEOUT)
    except TimeoutError:
        emit(ev.Warning(f"notify program `{argv[0]}` took longer than {TIMEOUT:g} s and was stopped"))
        return
    if proc.returncode:
        detail = err.decode("utf-8", "replace").strip()
        emit(ev.Warning(f"notify program `{argv[0]}` failed with exit code {proc.returncode}: {detail[:300]}"))

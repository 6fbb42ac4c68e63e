"""``turn/start``, ``turn/steer``, ``turn/interrupt`` and ``review/start``.

A turn runs in its thread, not in the request: ``turn/start`` answers at once with the turn in
progress and the events follow as notifications to every subscriber. Settings a turn may carry
(the collaboration mode, the model) are applied first, as their own quiet steps; a change of the
approval policy, the sandbox or the folder mid-thread is refused until the session's typed
operations can make it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.dispatch import Method, text_param
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.sessions import CODEX_APPROVAL
from agent_cli.app_server.shapes import sandbox_shape
from agent_cli.app_server.thread import LoadedThread, Step

MODES = {"plan": "plan", "default": "agent"}  # Codex's collaboration modes -> ours
SHOWN_WHILE_SETTING = (ev.Warning, ev.Error, ev.InputRejected, ev.ApprovalRequest, ev.TokenCount)
REVIEW_TARGETS = {
    "uncommittedChanges": lambda t: "--uncommitted",
    "baseBranch": lambda t: f"--base {t['branch']}",
    "commit": lambda t: f"--commit {t['sha']}",
    "custom": lambda t: str(t["instructions"]),
}


def user_input(items: Any) -> tuple[str, list[Path]]:
    """The text and the image files of a ``UserInput`` list."""
    if not isinstance(items, list) or not items:
        raise rpc.invalid_params("input must be a non-empty list")
    texts: list[str] = []
    images: list[Path] = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif kind == "localImage" and isinstance(item.get("path"), str):
            images.append(Path(item["path"]))
        elif kind in ("skill", "mention"):
            continue  # the $name or @name in the text says it already
        else:
            raise rpc.invalid_params(f"input of type {kind!r} is not supported (text, localImage, skill, mention)")
    if not any(text.strip() for text in texts) and not images:
        raise rpc.invalid_params("the input is empty")
    return "\n".join(texts), images


def quiet(events: AsyncIterator[ev.Event]) -> Step:
    """A settings step: its notices stay out of the turn, its problems do not."""

    async def step() -> AsyncIterator[ev.Event]:
        async for event in events:
            if isinstance(event, SHOWN_WHILE_SETTING):
                yield event

    return step


def turn_methods(host: ThreadHost) -> dict[str, Method]:
    door = host.door

    def settings_steps(thread: LoadedThread, params: dict[str, Any]) -> list[Step]:
        described = door.describe(thread.session)
        if (policy := params.get("approvalPolicy")) is not None and policy != CODEX_APPROVAL[described["approval"]]:
            raise rpc.invalid_params(
                f"this thread runs with approval policy {described['approval']}; start a new thread to change it"
            )
        sandbox = params.get("sandboxPolicy")
        if isinstance(sandbox, dict) and sandbox.get("type") != sandbox_shape(described)["type"]:
            raise rpc.invalid_params(
                f"this thread runs in the {described['sandbox']} sandbox; start a new thread to change it"
            )
        cwd = params.get("cwd")
        if isinstance(cwd, str) and cwd and Path(cwd).resolve() != Path(described["cwd"]).resolve():
            raise rpc.invalid_params(f"this thread works in {described['cwd']}; start a new thread for {cwd}")
        if params.get("outputSchema") is not None:
            raise rpc.invalid_params("outputSchema is not supported here (agent exec --output-schema is)")
        steps: list[Step] = []
        collaboration = params.get("collaborationMode")
        mode = MODES.get(str(collaboration.get("mode"))) if isinstance(collaboration, dict) else None
        if mode is not None and mode != described["mode"]:
            steps.append(quiet(door.set_mode(thread.session, mode)))
        model = params.get("model")
        if isinstance(model, str) and model and model != described["model"]:
            steps.append(quiet(door.set_model(thread.session, model)))
        return steps

    async def start(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        text, images = user_input(params.get("input"))
        if thread.turn is not None:
            raise rpc.invalid_request("a turn is running in this thread: steer it (turn/steer) or interrupt it")
        steps = [*settings_steps(thread, params), lambda: door.user_turn(thread.session, text, images)]
        return {"turn": host.begin(thread, steps).shape()}

    async def steer(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        text, images = user_input(params.get("input"))
        turn = thread.turn
        if turn is None or turn.id != params.get("expectedTurnId"):
            raise rpc.invalid_request("no running turn with that id: start one with turn/start")
        if turn.kind != "turn":
            raise rpc.invalid_request(f"a {turn.kind} turn cannot be steered")
        thread.steer(lambda: door.user_turn(thread.session, text, images))
        return {"turnId": turn.id}

    async def interrupt(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        wanted = params.get("turnId")
        if thread.turn is not None and wanted in (None, thread.turn.id):
            thread.interrupt()
        return {}

    async def review(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        if params.get("delivery") == "detached":
            raise rpc.invalid_params("detached reviews are not supported: review inline")
        target = params.get("target")
        kind = target.get("type") if isinstance(target, dict) else None
        if kind not in REVIEW_TARGETS:
            raise rpc.invalid_params(f"target must be one of {', '.join(REVIEW_TARGETS)}")
        if thread.turn is not None:
            raise rpc.invalid_request("a turn is running in this thread: wait for it or interrupt it")
        arguments = REVIEW_TARGETS[kind](target)
        turn = host.begin(thread, [lambda: door.review(thread.session, arguments)], "review", arguments)
        return {"turn": turn.shape(), "reviewThreadId": thread.id}

    return {"turn/start": start, "turn/steer": steer, "turn/interrupt": interrupt, "review/start": review}

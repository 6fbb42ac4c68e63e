"""``turn/start``, ``turn/steer``, ``turn/interrupt`` and ``review/start``.

A turn runs in its thread, not in the request: ``turn/start`` answers at once with the turn in
progress and the events follow as notifications to every subscriber. The overrides a turn carries
(the collaboration mode, the model, the approval policy, the sandbox) that differ from the
thread's are applied first, as operations of their own whose notices stay out of the turn; a
change of folder is refused (a thread works in one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.dispatch import Method, text_param
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.sessions import OUR_APPROVAL, Settings
from agent_cli.app_server.thread import LoadedThread, Step

MODES = {"plan": "plan", "default": "agent"}  # Codex's collaboration modes -> ours
SANDBOXES = {"readOnly": "read-only", "workspaceWrite": "workspace-write", "dangerFullAccess": "danger-full-access"}
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
        """``turn/start``'s overrides that differ from the thread's, as operations run first."""
        described = door.describe(thread.session)
        cwd = params.get("cwd")
        if isinstance(cwd, str) and cwd and Path(cwd).resolve() != Path(described["cwd"]).resolve():
            raise rpc.invalid_params(f"this thread works in {described['cwd']}; start a new thread for {cwd}")
        if params.get("outputSchema") is not None:
            raise rpc.invalid_params("outputSchema is not supported here (agent exec --output-schema is)")
        sandbox = params.get("sandboxPolicy")
        sandbox_mode = None
        if isinstance(sandbox, dict):
            sandbox_mode = SANDBOXES.get(str(sandbox.get("type")))
            if sandbox_mode is None:
                raise rpc.invalid_params(f"sandbox {sandbox.get('type')!r} is not one of {', '.join(SANDBOXES)}")
        policy = params.get("approvalPolicy")
        collaboration = params.get("collaborationMode")
        mode = MODES.get(str(collaboration.get("mode"))) if isinstance(collaboration, dict) else None
        model = params.get("model")
        wanted = Settings(
            model=model if isinstance(model, str) and model else None,
            approval=OUR_APPROVAL.get(policy) if isinstance(policy, str) else None,
            sandbox=sandbox_mode,
        )
        return [quiet(door.setting(thread.session, setting)) for setting in door.needs(thread.session, wanted, mode)]

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
        for event in await door.steer(thread.session, text, images):
            if isinstance(event, ev.InputRejected):
                raise rpc.invalid_request(event.message)
        return {"turnId": turn.id}

    async def interrupt(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        wanted = params.get("turnId")
        if thread.turn is not None and wanted in (None, thread.turn.id):
            await thread.interrupt()
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

"""The app-server's one door into sessions: every call it makes into the session core, the command
layer and the session store is in this module, and nowhere else in the package.

The turn methods are the session core's typed operations (operations.py), sent through the one
entry every front end uses (``commands.conversation.Conversation``): ``turn/start`` is a
``UserTurn`` after its settings (``SetMode``, ``SetModel``, ``SetApprovalPolicy``, ``SetSandbox``),
``turn/steer`` a ``Steer``, ``turn/interrupt`` an ``Interrupt``, ``thread/compact/start`` a
``Compact``, ``review/start`` ``RunCommand("review")``. Threads are opened as the other front ends
open theirs (``runtime.open_session``, ``session.resume.restore``), and found, forked, named and
archived in ``store/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server.history import answered, noted_interrupted, split_turns
from agent_cli.commands.conversation import Conversation
from agent_cli.config import Config, ConfigError, load_config
from agent_cli.context.fragments import TURN_ABORTED
from agent_cli.context.skills import Skill, load_skills, skill_roots
from agent_cli.items import Item, user
from agent_cli.models.base import Usage
from agent_cli.models.registry import missing_key
from agent_cli.operations import (
    Compact,
    Fork,
    Interrupt,
    RunCommand,
    SetApprovalPolicy,
    SetMode,
    SetModel,
    SetSandbox,
    Setting,
    Steer,
    UserTurn,
    is_approval_policy,
    is_mode,
    is_sandbox_mode,
)
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.forking import fork_file, fork_session
from agent_cli.session.learned import USAGE_KEYS
from agent_cli.session.resume import restore
from agent_cli.session.session import INTERRUPTED_NOTE
from agent_cli.store import archive
from agent_cli.store.catalog import SessionSummary, find_session, list_sessions, summarize
from agent_cli.store.names import session_names, set_session_name
from agent_cli.store.rollout import LoadedSession, RolloutError, load_session_file, read_header
from agent_cli.store.thread_ids import session_uuid
from agent_cli.trust.gate import provider_in_force
from agent_cli.worktrees.store import containing, hold

CODEX_APPROVAL = {"untrusted": "untrusted", "on-request": "on-request", "on-failure": "on-request", "never": "never"}
OUR_APPROVAL = {"untrusted": "untrusted", "on-request": "on-request", "never": "never"}
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")


class DoorError(Exception):
    """What the client asked cannot be done; the message says why (sent as invalid params)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What a client may choose when it starts, resumes or forks a thread (None: the config's)."""

    cwd: Path | None = None
    model: str | None = None
    provider: str | None = None
    approval: str | None = None  # ours: untrusted, on-request, on-failure, never
    sandbox: str | None = None  # read-only, workspace-write, danger-full-access


@dataclass(frozen=True, slots=True)
class Spent:
    """What a thread's model requests used, and the prices configured for it."""

    model: str
    usage: Usage
    prices: Any  # the config's [model_prices] table, if any


@dataclass(frozen=True, slots=True)
class Stored:
    """A saved session as a thread list shows it."""

    id: str  # the thread's id: the session's UUID (store/thread_ids.py)
    session_id: str
    path: Path
    cwd: str
    model: str
    provider: str
    created: int  # epoch seconds
    updated: int
    preview: str
    name: str | None


class SessionDoor:
    def __init__(self, overrides: list[str], flags: dict[str, Any], trust: bool, home: Path, cwd: Path) -> None:
        self.overrides, self.flags, self.trust = overrides, flags, trust  # `agent app-server -c ... -m ...`
        self.home = home  # $AGENT_HOME
        self.cwd = cwd  # where the server started: a thread's folder unless the client names one

    # --- opening sessions ----------------------------------------------------------------

    def config(self, settings: Settings, check_key: bool = True) -> Config:
        """The config a thread with ``settings`` runs with; ``check_key``: its provider's key must be there."""
        cwd = settings.cwd or self.cwd
        if not cwd.is_dir():
            raise DoorError(f"cwd {cwd} is not a folder")
        flags = dict(self.flags)
        for key, value in (
            ("model", settings.model),
            ("model_provider", settings.provider),
            ("approval_policy", settings.approval),
            ("sandbox_mode", settings.sandbox),
        ):
            if value is not None:
                flags[key] = value
        try:
            config = replace(load_config(cwd, self.overrides, flags), trust_repository=self.trust)
        except ConfigError as exc:
            raise DoorError(f"configuration error: {exc}") from None
        if check_key and (problem := missing_key(provider_in_force(config))) is not None:
            raise DoorError(problem)
        return config

    async def start(self, settings: Settings) -> Session:
        config = await asyncio.to_thread(self.config, settings)
        session = await asyncio.to_thread(lambda: open_session(config, interactive=True))
        self._started(session)
        return session

    async def resume(self, thread_id: str, settings: Settings) -> Session:
        """The saved session ``thread_id``, loaded to go on. A turn the process died in (killed
        mid-turn) is marked interrupted, as an interrupt would have left it."""
        path = self.locate(thread_id)
        try:
            header = read_header(path)
        except RolloutError as exc:
            raise DoorError(str(exc)) from None
        chosen = replace(
            settings,
            cwd=settings.cwd or Path(header.cwd),
            model=settings.model or (None if settings.provider else header.model),
            provider=settings.provider or (None if settings.model else header.provider),
        )
        if not (chosen.cwd and chosen.cwd.is_dir()):
            chosen = replace(chosen, cwd=None)
        config = await asyncio.to_thread(self.config, chosen)
        try:
            session = await asyncio.to_thread(lambda: restore(open_session(config, interactive=True), path))
        except RolloutError as exc:
            raise DoorError(str(exc)) from None
        turns = split_turns(session.history.items)
        if turns and not answered(turns[-1]) and not noted_interrupted(turns[-1]):  # cut off by a killed process
            session.record(user(TURN_ABORTED.wrap(INTERRUPTED_NOTE)))
            session.rollout.sync()
        self._started(session)
        return session

    async def fork(self, source: Session | None, thread_id: str, settings: Settings) -> Session:
        """A new thread with a copy of ``thread_id``'s conversation: the ``Fork`` operation on it
        when it is loaded and idle; its file's copy otherwise (mid-turn: what it holds so far)."""
        try:
            if source is not None and not source.running:
                path = await self._fork_op(source)
            else:
                path = fork_session(source) if source is not None else fork_file(self.home, self.locate(thread_id))
            new_id = read_header(path).id
        except RolloutError as exc:
            raise DoorError(str(exc)) from None
        return await self.resume(new_id, settings)

    @staticmethod
    async def _fork_op(source: Session) -> Path:
        events = [event async for event in Conversation(source).submit(Fork())]
        for event in events:
            if isinstance(event, ev.CommandAction) and event.action == "resume" and event.argument:
                return Path(event.argument)
        refusal = next((event.message for event in events if isinstance(event, ev.InputRejected)), "nothing to fork")
        raise DoorError(refusal)

    def _started(self, session: Session) -> None:
        if (worktree := containing(self.home, session.config.cwd)) is not None:
            hold(self.home, worktree)  # in use while the server runs: a client leaving never removes it
        if session.mcp is not None:
            session.mcp.manager.allow_questions()  # MCP elicitations reach the client
        session.start_mcp()

    # --- driving a session: operations (operations.py) through the one entry ----------------

    async def user_turn(self, session: Session, text: str, images: Sequence[Path] = ()) -> AsyncIterator[ev.Event]:
        """A prompt (``turn/start``): ``@path`` and ``!`cmd``` expanded, never read as a command."""
        async for event in Conversation(session).submit(UserTurn(text, tuple(images))):
            yield event

    async def setting(self, session: Session, setting: Setting) -> AsyncIterator[ev.Event]:
        """A turn's override (``turn/start``'s mode, model, approval policy, sandbox)."""
        async for event in Conversation(session).submit(setting):
            yield event

    async def steer(self, session: Session, text: str, images: Sequence[Path] = ()) -> list[ev.Event]:
        """More input for the running turn (``turn/steer``): the model reads it before its next request."""
        return [event async for event in Conversation(session).submit(Steer(text, tuple(images)))]

    async def compact(self, session: Session) -> AsyncIterator[ev.Event]:
        async for event in Conversation(session).submit(Compact()):
            yield event

    async def review(self, session: Session, target: str) -> AsyncIterator[ev.Event]:
        async for event in Conversation(session).submit(RunCommand("review", target)):
            yield event

    async def interrupt(self, session: Session) -> None:
        async for _event in Conversation(session).submit(Interrupt()):
            pass

    async def close(self, session: Session) -> None:
        await self.interrupt(session)
        await session.aclose()

    @staticmethod
    def needs(session: Session, wanted: Settings, mode: str | None) -> tuple[Setting, ...]:
        """The settings that differ from what ``session`` runs with now."""
        described = SessionDoor.describe(session)
        settings: list[Setting] = []
        if mode is not None and mode != described["mode"] and is_mode(mode):
            settings.append(SetMode(mode))
        if wanted.model and wanted.model != described["model"]:
            settings.append(SetModel(wanted.model))
        if wanted.approval and wanted.approval != described["approval"] and is_approval_policy(wanted.approval):
            settings.append(SetApprovalPolicy(wanted.approval))
        if wanted.sandbox and wanted.sandbox != described["sandbox"] and is_sandbox_mode(wanted.sandbox):
            settings.append(SetSandbox(wanted.sandbox))
        return tuple(settings)

    # --- what a session is now -----------------------------------------------------------

    @staticmethod
    def describe(session: Session) -> dict[str, Any]:
        sandbox = session.approvals.sandbox
        return {
            "id": session_uuid(session.id),  # the thread's id
            "session_id": session.id,
            "cwd": str(session.config.cwd),
            "model": session.model,
            "provider": session.config.provider.id,
            "mode": session.mode,
            "approval": session.approvals.policy,
            "sandbox": sandbox.mode if sandbox is not None else "danger-full-access",
            "writable_roots": [str(root) for root in sandbox.writable_roots] if sandbox is not None else [],
            "network": sandbox.network_access if sandbox is not None else True,
            "path": str(session.rollout.path),
            "running": session.running,
        }

    @staticmethod
    def history(session: Session) -> list[Item]:
        return list(session.history.items)

    # --- tokens spent (account/usage/read, for the web page) -------------------------------

    @staticmethod
    def spent(session: Session) -> Spent:
        return Spent(session.model, session.total_usage, session.config.raw.get("model_prices"))

    def stored_spent(self, thread_id: str) -> Spent:
        """A saved session's running totals: its last learned usage line (none: nothing spent)."""
        loaded = self.load(thread_id)
        totals = [
            record
            for record in loaded.learned
            if record.get("what") == "usage" and all(isinstance(record.get(key), int) for key in USAGE_KEYS)
        ]
        usage = Usage(*(totals[-1][key] for key in USAGE_KEYS)) if totals else Usage()
        return Spent(loaded.header.model, usage, self.config(Settings(), check_key=False).raw.get("model_prices"))

    # --- the store -----------------------------------------------------------------------

    def resolve_id(self, ref: str) -> str:
        """The thread id of the saved session ``ref`` names (its UUID or session id, a prefix, a name)."""
        return session_uuid(self.session_id_of(ref))

    def session_id_of(self, ref: str) -> str:
        try:
            return read_header(self.locate(ref)).id
        except RolloutError as exc:
            raise DoorError(str(exc)) from None

    def skills(self, cwd: Path) -> list[Skill]:
        return list(load_skills(skill_roots(cwd, self.home)).skills)

    def locate(self, thread_id: str) -> Path:
        try:
            return find_session(self.home, thread_id)
        except RolloutError as exc:
            raise DoorError(str(exc)) from None

    def load(self, thread_id: str) -> LoadedSession:
        try:
            return load_session_file(self.locate(thread_id))
        except RolloutError as exc:
            raise DoorError(str(exc)) from None

    def stored(self, cwd: str | None = None, archived: bool = False) -> list[Stored]:
        if archived:
            return [self._stored(summary) for summary in archive.list_archived(self.home)]
        return [self._stored(summary) for summary in list_sessions(self.home, cwd=cwd)]

    def stored_one(self, path: Path) -> Stored:
        info = path.stat()
        summary = summarize(path, info.st_mtime, info.st_size, session_names(self.home))
        if summary is None:
            raise DoorError(f"{path} is not a session file")
        return self._stored(summary)

    @staticmethod
    def _stored(summary: SessionSummary) -> Stored:
        return Stored(
            id=session_uuid(summary.id),
            session_id=summary.id,
            path=summary.path,
            cwd=summary.cwd,
            model=summary.model,
            provider=summary.provider,
            created=epoch(summary.created, summary.updated),
            updated=int(summary.updated),
            preview=summary.first_prompt or "",
            name=summary.name,
        )

    def archive(self, thread_id: str) -> None:
        try:
            archive.archive_session(self.home, self.locate(thread_id))
        except (RolloutError, OSError) as exc:
            raise DoorError(f"cannot archive {thread_id}: {exc}") from None

    def unarchive(self, thread_id: str) -> None:
        try:
            archive.unarchive_session(self.home, thread_id)
        except (RolloutError, OSError) as exc:
            raise DoorError(f"cannot unarchive {thread_id}: {exc}") from None

    def name_of(self, session_id: str) -> str | None:
        return session_names(self.home).get(session_id)

    def set_name(self, session_id: str, name: str | None) -> None:
        try:
            set_session_name(self.home, session_id, name)
        except ValueError as exc:
            raise DoorError(str(exc)) from None


def epoch(iso: str, fallback: float) -> int:
    try:
        return int(datetime.fromisoformat(iso).timestamp())
    except ValueError:
        return int(fallback)

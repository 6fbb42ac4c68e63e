"""The session's side of checkpoints: when to snapshot, what the session file records, and
taking turns back (/undo, /rewind, /fork). The snapshots themselves are agent_cli/checkpoints/.

A snapshot is taken before the first tool call of a user turn that may change files (apply_patch,
shell unless the sandbox is read-only, MCP tools not marked read-only, subagents), in a worker
thread with a time limit; a failure is a warning and the turn goes on. When the turn ends, a
second snapshot is started in the background: it is what later hand edits are told apart from.
Checkpoints are lines of the session file the model never sees (they are not history items).
"""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from agent_cli import events as ev
from agent_cli.checkpoints.gitcmd import CheckpointError, Deadline
from agent_cli.checkpoints.ledger import Checkpoint, Ledger, plan_for
from agent_cli.checkpoints.restore import RestorePlan, apply_restore, line_counts
from agent_cli.checkpoints.snapshot import take_snapshot, tree_state
from agent_cli.checkpoints.store import Store, checkpoints_dir, locate
from agent_cli.config import Config
from agent_cli.context.fragments import FILES_RESTORED, is_real_user_message
from agent_cli.display import human_size
from agent_cli.items import Message, user
from agent_cli.session.compaction_state import CompactionState
from agent_cli.session.state import Emit
from agent_cli.store.replay import shown_prompt
from agent_cli.store.rollout import RecordingHistory, RolloutWriter
from agent_cli.tools.registry import ToolRegistry

NEVER_CHANGE_FILES = frozenset({"update_plan", "memory_save"})  # they write only under $AGENT_HOME
PROMPT_CHARS = 200


@dataclass(frozen=True)
class PromptEntry:
    """A prompt of the conversation as a rewind picker lists it."""

    index: int  # in the history
    text: str  # as typed
    checkpoints: tuple[Checkpoint, ...]  # the snapshots its turn made (none: it changed no files)

    @property
    def shown(self) -> str:
        """The prompt as the user typed it: ``!git status`` for a shell command's record."""
        return shown_prompt(self.text)

    def changes(self) -> str:
        if not self.checkpoints:
            return "no file changes"
        return "; ".join(checkpoint.changes() for checkpoint in self.checkpoints)


class TurnCheckpoints:
    def __init__(
        self,
        config: Config,
        rollout: RolloutWriter,
        history: RecordingHistory,
        tools: ToolRegistry,
        compaction: CompactionState,
        *,
        enabled: bool,
    ):
        self._config, self._rollout, self._history = config, rollout, history
        self._tools, self._compaction = tools, compaction
        self.enabled = enabled  # `checkpoints = true`, and not a subagent (its parent's turn covers it)
        self.ledger = Ledger()
        self._store: Store | None = None
        self._turn: tuple[int, int, str] | None = None  # (turn number, prompt index, prompt) of this turn
        self._taken = False  # this turn's snapshot was tried
        self._pending: asyncio.Task[None] | None = None  # the "after" snapshot of the last turn, or a warm-up
        self._off: str | None = None  # why checkpoints stopped for this session (a snapshot too slow)
        self._told_off = False

    # --- taking them -----------------------------------------------------------------------

    @property
    def index_file(self) -> Path:
        """Our own git index, kept for the session so later snapshots hash only changed files."""
        return checkpoints_dir(self._config.agent_home) / "index" / f"{self._rollout.header.id}.index"

    def turn_started(self, turn: int, prompt_index: int, prompt: str) -> None:
        self._turn, self._taken = (turn, prompt_index, prompt[:PROMPT_CHARS]), False
        if self.enabled and self._off is None and self._pending is None and not self.index_file.exists():
            # The first snapshot hashes the whole tree: do it while the model thinks, so the
            # snapshot before the first change has only what changed since to add.
            self._pending = asyncio.get_running_loop().create_task(self._warm_up())

    async def _warm_up(self) -> None:
        config = self._config
        try:
            if self._store is None:
                self._store = await asyncio.to_thread(locate, config.cwd, config.agent_home)
            await asyncio.to_thread(
                tree_state,
                self._store,
                self.index_file,
                config.checkpoint_max_file_bytes,
                Deadline(config.checkpoint_timeout_ms / 1000),
            )
        except CheckpointError as exc:
            if exc.too_slow or exc.refused:
                self._off = str(exc)  # told before the first change, when it matters
        except OSError:
            pass  # the snapshot itself reports it

    def may_change_files(self, name: str) -> bool:
        if name in NEVER_CHANGE_FILES or self._tools.is_read_only(name):
            return False
        return not (name == "shell" and self._config.sandbox_mode == "read-only")

    async def before_tools(self, names: list[str], emit: Emit) -> None:
        """Called before each batch of tool calls: snapshot once per turn, before the first change."""
        if self._taken or self._turn is None or not self.enabled or not any(map(self.may_change_files, names)):
            return
        self._taken = True
        await self._settle()
        if self._off is not None:
            if not self._told_off:
                self._told_off = True
                emit(ev.Warning(f"checkpoints are off for this session (/undo cannot take turns back): {self._off}"))
            return
        config, started = self._config, time.monotonic()
        number = len(self.ledger.checkpoints) + 1
        name = f"{self._rollout.header.id}/{number}"
        try:
            if self._store is None:
                self._store = await asyncio.to_thread(locate, config.cwd, config.agent_home)
            snapshot, skipped = await asyncio.to_thread(
                take_snapshot,
                self._store,
                self.index_file,
                f"{name}-before",
                config.checkpoint_max_file_bytes,
                config.checkpoint_timeout_ms / 1000,
            )
        except (CheckpointError, OSError) as exc:
            if isinstance(exc, CheckpointError) and (exc.too_slow or exc.refused):
                self._off, self._told_off = str(exc), True  # trying again each turn would cost as much again
                emit(ev.Warning(f"checkpoints are off for this session (/undo cannot take turns back): {exc}"))
            else:
                emit(ev.Warning(f"no checkpoint for this turn (/undo cannot take it back): {exc}"))
            return
        turn, prompt_index, prompt = self._turn
        store = self._store
        checkpoint = Checkpoint(
            str(number),
            turn,
            self._compaction.count,
            prompt_index,
            prompt,
            store.kind,
            str(store.git_dir),
            str(store.work_tree),
            snapshot.commit,
            list(snapshot.skipped),
            config.checkpoint_max_file_bytes,
        )
        self.ledger.add(checkpoint)
        self._rollout.append_checkpoint("checkpoint", **checkpoint.record())
        if skipped:
            names = ", ".join(f"{path} ({human_size(size)})" for path, size in skipped[:10])
            more = f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
            emit(
                ev.Warning(
                    f"checkpoint left out files over {human_size(config.checkpoint_max_file_bytes)}: "
                    f"{names}{more}; /undo will not restore them"
                )
            )
        emit(
            ev.CheckpointCreated(
                checkpoint.id, turn, snapshot.commit, snapshot.files, snapshot.skipped, time.monotonic() - started
            )
        )

    def turn_ended(self) -> None:
        """Start the turn's "after" snapshot in the background (not in the way of the next prompt)."""
        self._turn = None
        checkpoint = self.ledger.checkpoints[-1] if self._taken and self.ledger.checkpoints else None
        if checkpoint is None or checkpoint.after is not None or self._store is None:
            return
        self._pending = asyncio.get_running_loop().create_task(self._after(checkpoint, self._store))

    async def _after(self, checkpoint: Checkpoint, store: Store) -> None:
        config = self._config
        name = f"{self._rollout.header.id}/{checkpoint.id}-after"
        try:
            snapshot, _ = await asyncio.to_thread(
                take_snapshot,
                store,
                self.index_file,
                name,
                config.checkpoint_max_file_bytes,
                config.checkpoint_timeout_ms / 1000,
            )
            files, added, removed = await asyncio.to_thread(
                line_counts, store.git(), checkpoint.before, snapshot.commit
            )
        except (CheckpointError, OSError):
            return  # /undo then judges hand edits against the tree as it is
        checkpoint.after, checkpoint.files, checkpoint.added, checkpoint.removed = (
            snapshot.commit,
            files,
            added,
            removed,
        )
        self._rollout.append_checkpoint(
            "checkpoint_after", id=checkpoint.id, after=snapshot.commit, files=files, added=added, removed=removed
        )

    async def _settle(self) -> None:
        """Wait for the last "after" snapshot (it uses the same index file)."""
        if self._pending is not None:
            await asyncio.gather(self._pending, return_exceptions=True)
            self._pending = None

    async def aclose(self) -> None:
        await self._settle()
        self.index_file.unlink(missing_ok=True)

    def restore_lines(self, records) -> None:
        """Checkpoint and rewind lines of a resumed session file, in order."""
        for record in records:
            self.ledger.replay(record)

    # --- taking turns back -----------------------------------------------------------------

    def prompts(self) -> list[PromptEntry]:
        """The prompts of the conversation since the last compaction, oldest first."""
        epoch = self._compaction.count
        entries = []
        for index, item in enumerate(self._history.items):
            if is_real_user_message(item):
                text = item.typed or item.text  # type: ignore[union-attr]
                mine = tuple(c for c in self.ledger.active() if c.epoch == epoch and c.prompt_index == index)
                entries.append(PromptEntry(index, text, mine))
        return entries

    async def plan(self, checkpoints: list[Checkpoint]) -> RestorePlan:
        await self._settle()
        scratch = self.index_file.with_suffix(".scratch")
        if self.index_file.exists():
            await asyncio.to_thread(shutil.copy2, self.index_file, scratch)  # hashes only what changed
        try:
            return await asyncio.to_thread(plan_for, checkpoints, scratch)
        finally:
            scratch.unlink(missing_ok=True)

    async def restore(self, plan: RestorePlan, checkpoints: list[Checkpoint], tell_model: bool) -> list[str]:
        """Apply ``plan``; its checkpoints are marked undone (in the file too). With ``tell_model``,
        the conversation gets a note naming the restored files (its memory of them is stale)."""
        restored = await asyncio.to_thread(apply_restore, plan)
        for checkpoint in checkpoints:
            checkpoint.undone = True
        self._rollout.append_checkpoint("checkpoint_undone", ids=[c.id for c in checkpoints])
        if tell_model and (restored or plan.conflicts):
            self._history.record(user(FILES_RESTORED.wrap(restored_note(checkpoints, restored, plan.conflicts))))
        self._rollout.sync()
        return restored

    def rewind_conversation(self, index: int) -> str:
        """Go back to just before the prompt at ``index``; returns that prompt (for the composer).
        The session's last usage report no longer describes the context (``Session.rewind``)."""
        items = self._history.items
        prompt = items[index]
        if not is_real_user_message(prompt):
            raise ValueError(f"history item {index} is not a prompt")
        epoch = self._compaction.count
        self._history.rewind(index, epoch)
        self.ledger.abandon_from(index, epoch)
        self._rollout.sync()
        assert isinstance(prompt, Message)
        return prompt.typed or prompt.text


def restored_note(checkpoints: list[Checkpoint], restored: list[str], conflicts: list[str]) -> str:
    turns = ", ".join(repr(c.prompt[:80]) for c in checkpoints)
    lines = [f"The user restored the files to how they were before your work on: {turns}."]
    if restored:
        lines.append("Restored or removed: " + ", ".join(restored[:50]) + (" …" if len(restored) > 50 else ""))
    if conflicts:
        lines.append("Left as they are (changed by hand since): " + ", ".join(conflicts[:50]))
    lines.append("What you remember of these files is out of date; read them again before relying on them.")
    return "\n".join(lines)

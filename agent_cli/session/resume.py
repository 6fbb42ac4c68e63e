"""Restore a Session from its session file and carry on appending to the same file
(:func:`agent_cli.runtime.open_session` assembles the session, :func:`restore` fills it).

The restored history already holds the initial context, so none is recorded again. What changed
since (another cwd, a new day, other approval or sandbox settings) is appended as an
``<environment_context>`` fragment with only the changed fields. Tool calls that never got an
output (the process died while they ran) are closed with an "aborted" output.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import unescape

from agent_cli.context.environment import FIELD_ORDER, EnvironmentContext, diff
from agent_cli.context.fragments import ENVIRONMENT_CONTEXT
from agent_cli.files.images import restore_images
from agent_cli.items import Item, Message, user
from agent_cli.session.resume_info import ResumeInfo
from agent_cli.session.session import Session

_FIELD = re.compile(r"<(\w+)>(.*?)</\1>", re.DOTALL)
_ROOT = re.compile(r"<root>(.*?)</root>", re.DOTALL)


def restore(session: Session, path: Path) -> Session:
    """Fill ``session``, new from :func:`agent_cli.runtime.open_session`, with the history saved
    in ``path``; new items go to the same file. Returns the session.

    Raises :class:`~agent_cli.store.rollout.RolloutError` (with a message for the user) for a
    missing, corrupt, locked or newer-format file. ``session.resumed`` describes what happened.
    """
    config = session.config
    loaded = session.rollout.continue_file(path)
    items, image_warnings = restore_images(loaded.items, config.agent_home)  # bytes from $AGENT_HOME/images
    session.history.restore(items)
    session.compaction.count = loaded.compactions  # the accuracy warning counts every compaction so far
    session.checkpoints.restore_lines(loaded.checkpoints)  # /undo and /rewind reach turns before the resume
    learned = session.learned.restore(loaded.learned, len(loaded.items))  # window, calibration...
    session.meter.restore(learned)
    changed: tuple[str, ...] = ()
    if loaded.items:
        # Kept for later environment diffs and compaction; its items are not recorded again.
        initial = session.build_initial_context()
        changed = record_environment_change(session, loaded.items, initial.environment)
        session.restart_context(initial)  # what the model now knows, for later turns' diffs
    closed = session.history.close_open_calls()
    session.hooks.pending_start = "resume"  # SessionStart hooks run with source "resume"
    session.rollout.sync()
    session.mark_resumed(
        ResumeInfo(
            path=Path(path),
            session_id=loaded.header.id,
            restored_items=len(loaded.items),
            closed_calls=closed,
            compactions=loaded.compactions,
            environment_changed=changed,
            warnings=(*loaded.warnings, *image_warnings, *learned.warnings),
        )
    )
    return session


def record_environment_change(
    session: Session, items: tuple[Item, ...], current: EnvironmentContext
) -> tuple[str, ...]:
    """Append a fragment with the environment fields that differ from the saved ones."""
    saved = saved_environment(items)
    # Fields the saved history never stated are taken as unchanged.
    previous = EnvironmentContext(**{name: saved.get(name, getattr(current, name)) for name in FIELD_ORDER})
    fragment = diff(previous, current)
    if fragment is None:
        return ()
    session.record(user(fragment))
    return tuple(name for name in FIELD_ORDER if getattr(previous, name) != getattr(current, name))


def saved_environment(items: tuple[Item, ...]) -> dict[str, object]:
    """The environment as the model last saw it: the full fragment, updated by later diffs."""
    state: dict[str, object] = {}
    for item in items:
        if isinstance(item, Message) and item.role == "user" and ENVIRONMENT_CONTEXT.matches(item.text):
            state.update(parse_environment_fragment(item.text))
    return state


def parse_environment_fragment(text: str) -> dict[str, object]:
    body = text.strip().removeprefix(ENVIRONMENT_CONTEXT.start).removesuffix(ENVIRONMENT_CONTEXT.end)
    fields: dict[str, object] = {}
    for name, value in _FIELD.findall(body):
        if name == "writable_roots":
            fields[name] = tuple(unescape(root.strip()) for root in _ROOT.findall(value))
        elif name == "network_access":
            fields[name] = value.strip() == "enabled"
        elif name in FIELD_ORDER:
            fields[name] = unescape(value.strip())
    return fields

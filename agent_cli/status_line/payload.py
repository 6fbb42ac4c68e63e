"""The JSON a status line command reads on stdin: Claude Code's fields, filled from our session.

``session_id``, ``transcript_path``, ``cwd``, ``model.id`` / ``model.display_name``,
``workspace.current_dir`` / ``project_dir``, ``version``, ``output_style.name``, ``cost``
(``total_cost_usd``, ``total_duration_ms``, ``total_api_duration_ms``, ``total_lines_added``,
``total_lines_removed``), ``context_window`` and ``exceeds_200k_tokens``. What the session does not
know itself (lines changed, time waiting for the model) :class:`StatusFacts` counts from events.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_cli import __version__
from agent_cli import events as ev
from agent_cli.context.project_doc import find_git_root
from agent_cli.models.pricing import price_for

if TYPE_CHECKING:
    from agent_cli.session.session import Session


@dataclass
class StatusFacts:
    """What the status line reports that the session does not keep: counted from its events."""

    started: float = field(default_factory=time.monotonic)
    lines_added: int = 0
    lines_removed: int = 0
    api_seconds: float = 0.0
    _turn_started: float | None = None

    def observe(self, event: ev.Event) -> bool:
        """Count ``event``; True when it changes what a status line shows (run it again)."""
        if isinstance(event, ev.SubagentEvent):  # a subagent's edits count; its turn is inside ours
            inner = event.event
            return self.observe(inner) if isinstance(inner, ev.ToolCallEnd) and inner.changes else False
        match event:
            case ev.ToolCallEnd(changes=changes):
                for change in changes:
                    added, removed = diff_lines(change.diff)
                    self.lines_added += added
                    self.lines_removed += removed
                self._turn_started = time.monotonic()  # the next request starts
                return bool(changes)
            case ev.TurnStarted():
                self._turn_started = time.monotonic()
                return False
            case ev.TokenCount():
                if self._turn_started is not None:  # the model answered: its time counts as API time
                    now = time.monotonic()
                    self.api_seconds += now - self._turn_started
                    self._turn_started = now
                return True
            case ev.ToolCallBegin():
                self._turn_started = None
                return False
            case ev.TurnComplete() | ev.TurnAborted() | ev.TurnFailed() | ev.CompactionFinished():
                self._turn_started = None
                return True
        return False


def diff_lines(diff: str) -> tuple[int, int]:
    """(+, -) lines of a unified diff, headers left out."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def session_json(session: Session, facts: StatusFacts) -> dict[str, Any]:
    cwd = session.config.cwd
    usage = session.total_usage
    price = price_for(session.model, session.config.raw.get("model_prices"))
    count = session.token_count_event()
    return {
        "hook_event_name": "Status",
        "session_id": session.id,
        "transcript_path": str(session.rollout.path),
        "cwd": str(cwd),
        "model": {"id": session.model, "display_name": session.model},
        "workspace": {"current_dir": str(cwd), "project_dir": str(find_git_root(cwd) or cwd)},
        "version": __version__,
        "output_style": {"name": "default"},
        "cost": {
            "total_cost_usd": round(price.cost(usage), 6) if price else 0.0,
            "total_duration_ms": int((time.monotonic() - facts.started) * 1000),
            "total_api_duration_ms": int(facts.api_seconds * 1000),
            "total_lines_added": facts.lines_added,
            "total_lines_removed": facts.lines_removed,
        },
        "context_window": {
            "context_window_size": count.context_window,
            "total_input_tokens": usage.input_tokens,
            "total_output_tokens": usage.output_tokens,
            "current_usage": {
                "input_tokens": count.last.input_tokens - count.last.cached_input_tokens,
                "output_tokens": count.last.output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": count.last.cached_input_tokens,
            },
        },
        "exceeds_200k_tokens": count.context_used > 200_000,
    }

"""What the session learned about its model server, kept in the session file for a resume.

Three things would otherwise be learned again, at a cost, by every process that resumes:

- the calibration ratio per model (context/tokens.py): without it the first request after a
  resume plans with bytes/4 and can overflow a local server's window once before recovering;
- the window the server turned out to have, per model (session/window.py): discovery answers
  only after the first request, an overflow error names it only by refusing one, and a server
  that cuts prompts silently would cut the first request after a resume without a word. A
  configured `model_context_window` still wins, and discovery still corrects it afterwards;
- whether the last compaction got the context under the auto-compaction threshold
  (session/compaction.py): when it did not, the session stops trying; forgotten, the first request
  after a resume sends the whole conversation to be summarized again, for nothing.

The session's running token totals are kept the same way (one short line per model response), so
the status bar's session figures carry on after a resume instead of starting from zero.

Each is one short "learned" line appended when it changes (never per turn, never a rewrite);
a resume applies the last line of each kind (the calibration per model). Kinds this version does
not know are skipped without a word: they can only be learned again.

What a chat server rejected (models/chat_quirks.py) is not kept: a server restarted with other
flags (llama.cpp ``--jinja``, vLLM ``--enable-auto-tool-choice``) may accept it now, and a
remembered refusal would leave the resumed session without tools and without a word; asking
again costs one refused request and shows the notice once more.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agent_cli import events as ev
from agent_cli.context.tokens import Calibration
from agent_cli.models.base import Usage

if TYPE_CHECKING:
    from agent_cli.session.compaction import CompactionState
    from agent_cli.session.rollout import RolloutWriter
    from agent_cli.session.session import Session

# A ratio is written again once it moved this much since the last line: thresholds keep more
# headroom than that, and a settled ratio then costs no more lines.
RATIO_STEP = 0.05
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")  # Usage's field order


class LearnedState:
    """Writes what was learned to the session file when it changes."""

    def __init__(self, writer: RolloutWriter):
        self._writer = writer
        self._saved_ratios: dict[str, float] = {}  # per model, as last written

    def calibration_changed(self, model: str, calibration: Calibration) -> None:
        saved = self._saved_ratios.get(model)
        if not calibration.reports or (saved is not None and abs(calibration.ratio / saved - 1) < RATIO_STEP):
            return
        self._saved_ratios[model] = calibration.ratio
        self._writer.append_learned(
            "calibration", model=model, ratio=round(calibration.ratio, 4), reports=calibration.reports
        )

    def window_learned(self, model: str, tokens: int, source: str) -> None:
        self._writer.append_learned("window", model=model, tokens=tokens, source=source)

    def compaction_finished(self, state: CompactionState, applied: ev.CompactionFinished | None = None) -> None:
        shown = {}
        if applied is not None:  # what `/compact show` lists, for a resumed session
            shown = {
                "shown": {
                    "trigger": applied.trigger,
                    "summary": applied.summary,
                    "dropped": [[d.kind, d.label, d.tokens, d.spill_file] for d in applied.dropped],
                }
            }
        self._writer.append_learned(
            "compaction", history_len_after=state.history_len_after, tokens_after=state.tokens_after, **shown
        )

    def usage_total(self, total: Usage) -> None:
        """The session's running token totals (the status bar's ↑ ↓), so a resume carries them on."""
        self._writer.append_learned(
            "usage",
            input_tokens=total.input_tokens,
            cached_input_tokens=total.cached_input_tokens,
            output_tokens=total.output_tokens,
            reasoning_tokens=total.reasoning_tokens,
        )

    def restore(self, session: Session, records: Iterable[dict[str, Any]], saved_items: int) -> list[str]:
        """Apply the lines a resumed file kept; ``saved_items`` is its history's length.
        Returns warnings for lines that make no sense (they are skipped)."""
        warnings: list[str] = []
        calibrations: dict[str, tuple[float, int]] = {}
        windows: dict[str, tuple[int, str]] = {}
        compaction: tuple[int, int] | None = None
        usage: Usage | None = None
        shown: ev.CompactionFinished | None = None
        for record in records:
            what = record.get("what")
            if what == "calibration" and _valid_calibration(record):
                calibrations[record["model"]] = (float(record["ratio"]), record["reports"])
            elif what == "window" and _valid_window(record):
                windows[record["model"]] = (record["tokens"], record["source"])
            elif what == "compaction" and _valid_compaction(record, saved_items):
                compaction = (record["history_len_after"], record["tokens_after"])
                shown = _shown_compaction(record.get("shown")) or shown
            elif what == "usage" and all(_is_int(record.get(key)) for key in USAGE_KEYS):
                usage = Usage(*(record[key] for key in USAGE_KEYS))
            elif what in ("calibration", "window", "compaction", "usage"):
                warnings.append(f"skipped a malformed learned {what} line in the session file")
            # Other kinds come from a newer agent-cli: only something to learn again, no warning.
        for model, (ratio, reports) in calibrations.items():
            session.counter_for(model).calibration.restore(ratio, reports)
            self._saved_ratios[model] = ratio
        window = windows.get(session.model)
        if window is not None:
            session.window.restore(*window)
        if compaction is not None:
            session.compaction.history_len_after, session.compaction.tokens_after = compaction
        if usage is not None:
            session.total_usage = usage
        session.compaction.last = shown
        return warnings


def _shown_compaction(value: Any) -> ev.CompactionFinished | None:
    """The summary and dropped list a compaction line kept (None when absent or malformed)."""
    if not isinstance(value, dict) or not isinstance(value.get("summary"), str):
        return None
    trigger = value.get("trigger") if value.get("trigger") in ("manual", "auto", "overflow") else "manual"
    dropped = []
    for entry in value.get("dropped") or []:
        if (
            isinstance(entry, list)
            and len(entry) == 4
            and entry[0] in ("file", "output", "message")
            and isinstance(entry[1], str)
            and _is_int(entry[2])
            and (entry[3] is None or isinstance(entry[3], str))
        ):
            dropped.append(ev.DroppedItem(*entry))
    return ev.CompactionFinished(trigger, 0, 0, 0, 0, summary=value["summary"], dropped=tuple(dropped))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _valid_calibration(record: dict[str, Any]) -> bool:
    ratio = record.get("ratio")
    return (
        isinstance(record.get("model"), str)
        and _is_int(record.get("reports"))
        and isinstance(ratio, (int, float))
        and not isinstance(ratio, bool)
        and Calibration.MIN_RATIO <= ratio <= Calibration.MAX_RATIO
    )


def _valid_window(record: dict[str, Any]) -> bool:
    tokens = record.get("tokens")
    return (
        isinstance(record.get("model"), str)
        and _is_int(tokens)
        and tokens > 0
        and isinstance(record.get("source"), str)
    )


def _valid_compaction(record: dict[str, Any], saved_items: int) -> bool:
    length = record.get("history_len_after")
    return _is_int(length) and length <= saved_items and _is_int(record.get("tokens_after"))

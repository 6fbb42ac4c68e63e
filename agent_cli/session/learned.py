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
from dataclasses import dataclass, field
from typing import Any

from agent_cli import events as ev
from agent_cli.context.tokens import Calibration
from agent_cli.models.base import Usage
from agent_cli.session.compaction_state import CompactionState
from agent_cli.store.rollout import RolloutWriter

# A ratio is written again once it moved this much since the last line: thresholds keep more
# headroom than that, and a settled ratio then costs no more lines.
RATIO_STEP = 0.05
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")  # Usage's field order


@dataclass
class Learned:
    """What a resumed file's learned lines say (the last of each kind); the session applies it."""

    calibrations: dict[str, tuple[float, int]] = field(default_factory=dict)  # model -> (ratio, reports)
    windows: dict[str, tuple[int, str]] = field(default_factory=dict)  # model -> (tokens, source)
    compaction: tuple[int, int] | None = None  # (history_len_after, tokens_after)
    usage: Usage | None = None  # the session's running totals
    shown: ev.CompactionFinished | None = None  # what `/compact show` lists
    warnings: list[str] = field(default_factory=list)  # lines that made no sense (skipped)


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

    def restore(self, records: Iterable[dict[str, Any]], saved_items: int) -> Learned:
        """Read the lines a resumed file kept; ``saved_items`` is its history's length. Lines that
        make no sense are skipped with a warning; the session applies the rest (``ContextMeter.restore``)."""
        learned = Learned()
        for record in records:
            what = record.get("what")
            if what == "calibration" and _valid_calibration(record):
                learned.calibrations[record["model"]] = (float(record["ratio"]), record["reports"])
            elif what == "window" and _valid_window(record):
                learned.windows[record["model"]] = (record["tokens"], record["source"])
            elif what == "compaction" and _valid_compaction(record):
                if record["history_len_after"] <= saved_items:  # else /rewind went back past it (older files)
                    learned.compaction = (record["history_len_after"], record["tokens_after"])
                learned.shown = _shown_compaction(record.get("shown")) or learned.shown
            elif what == "usage" and all(_is_int(record.get(key)) for key in USAGE_KEYS):
                learned.usage = Usage(*(record[key] for key in USAGE_KEYS))
            elif what in ("calibration", "window", "compaction", "usage"):
                learned.warnings.append(f"skipped a malformed learned {what} line in the session file")
            # Other kinds come from a newer agent-cli: only something to learn again, no warning.
        for model, (ratio, _reports) in learned.calibrations.items():
            self._saved_ratios[model] = ratio
        return learned


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


def _valid_compaction(record: dict[str, Any]) -> bool:
    return _is_int(record.get("history_len_after")) and _is_int(record.get("tokens_after"))

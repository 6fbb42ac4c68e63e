"""The session's accounting: usage, token counts, the window and when auto-compaction starts.

A :class:`ContextMeter` belongs to the session and is handed to each turn (session_state.py). It
answers how big the context is and how big it may grow, and keeps what the server reported:

- usage: the last report and the running totals (``count_usage`` for tokens spent outside the
  context: a summary, a subagent, a prompt hook);
- the context's size: the last report plus estimates of what joined the history since, or, when
  no report describes the history (after a compaction, a model switch, a cut prompt), the
  request's fixed parts (a :class:`~agent_cli.session.request_parts.RequestParts`) plus the history;
- the token counter per model (exact once the tokenizer is loaded, calibrated by reports);
- the window (session/window.py) and the thresholds that follow from it: auto-compaction,
  a tool output's share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.initial import InitialContext
from agent_cli.context.tokens import TokenCounter, auto_compact_limit, effective_window, tool_output_limit
from agent_cli.models.base import ModelClient, Usage
from agent_cli.session.compaction_state import AutoCompactSetting, CompactionState
from agent_cli.session.counters import TokenCounters
from agent_cli.session.learned import Learned, LearnedState
from agent_cli.session.request_parts import RequestParts
from agent_cli.session.state import Emit
from agent_cli.session.window import TRUNCATION_SHARE, ContextWindow
from agent_cli.store.rollout import RecordingHistory


class ContextMeter:
    def __init__(
        self,
        config: Config,
        counters: TokenCounters,
        window: ContextWindow,
        compaction: CompactionState,
        history: RecordingHistory,
        learned: LearnedState,
    ):
        self._config = config
        self.counters = counters
        self.window = window
        self._compaction = compaction  # its /autocompact setting, and the last step (reset with the history)
        self._history = history
        self._learned = learned  # totals and calibration go to the session file, for a resume
        self.total_usage = Usage()
        self.last_usage: Usage | None = None
        self._usage_mark: int | None = 0  # len(history) at the last usage report; None: no report describes it
        self._initial_tokens: tuple[object, int] | None = None  # (initial context, its token count)

    # --- the counter -----------------------------------------------------------------------

    @property
    def tokens(self) -> TokenCounter:
        """The current model's counter: an estimate; exact near limits, once the tokenizer is loaded."""
        return self.counters.current

    def counter_for(self, model: str) -> TokenCounter:
        """``model``'s counter, kept per model so switching back finds its calibration again."""
        return self.counters.for_model(model)

    def switch_model(self, model: str) -> None:
        """Count and plan for ``model`` from now on: its counter (the history recounted once, unless
        both count alike), its window; the last report, in the old model's tokens, is not reused."""
        counter = self.counter_for(model)
        previous, self.counters.current = self.tokens, counter
        counter.use_loaded()  # an encoding this process already loaded counts exactly at once
        if not counter.counts_like(previous):
            self._history.recount()
        self._initial_tokens = None
        self.distrust_last_usage()
        self.window.switch(model)

    async def count_exactly(self) -> None:
        """Count with the model's tokenizer from now on (when it has one): loaded off the event
        loop, once; the history is recounted once, so estimates and exact counts never mix."""
        if await self.tokens.load_async():
            self._history.recount()
            self._initial_tokens = None

    async def count_exactly_near(self, limit: int | None, parts: RequestParts, extra: int = 0) -> None:
        """Start counting exactly when the context (plus ``extra`` tokens about to join it) is
        within the estimate's error of ``limit`` (context/tokens.py), before deciding by it."""
        if (
            limit is not None
            and self.tokens.can_be_exact
            and self.tokens.near(self.context_tokens(parts) + extra, limit)
        ):
            await self.count_exactly()

    def initial_tokens(self, initial: InitialContext | None) -> int:
        """Tokens of the initial context, counted once per initial context (checked every turn)."""
        if initial is None:
            return 0
        if self._initial_tokens is None or self._initial_tokens[0] is not initial:
            self._initial_tokens = (initial, self.tokens.items_tokens(initial.items))
        return self._initial_tokens[1]

    # --- usage -----------------------------------------------------------------------------

    def record_usage(self, usage: Usage | None) -> None:
        """The server's report for a request of the conversation: it measures the context."""
        if usage is not None:
            self.last_usage = usage
            self.total_usage = self.total_usage + usage
            self._usage_mark = len(self._history)
            self._learned.usage_total(self.total_usage)  # a resume shows the same totals

    def count_usage(self, usage: Usage) -> None:
        """Tokens spent outside the context's own requests (a summary, a subagent's turn): in the totals only."""
        self.total_usage = self.total_usage + usage

    def distrust_last_usage(self) -> None:
        """Estimate the whole context again: the last report does not describe what is sent."""
        self._usage_mark = None

    def history_replaced(self, length: int) -> None:
        """A compaction swapped the history (``length`` items now): no report describes it, and
        steps are measured in the new history from here."""
        self.window.sent_items = length
        self._compaction.last_step = None
        self._usage_mark = None

    # --- the context's size ----------------------------------------------------------------

    def context_tokens(self, parts: RequestParts) -> int:
        """Tokens the next request will carry (its fixed ``parts`` and the history): the last report
        plus estimates since, calibrated to the server's counts."""
        mark = self._usage_mark
        if self.last_usage is not None and mark is not None and mark <= len(self._history):
            reported = self.last_usage.input_tokens + self.last_usage.output_tokens
            return reported + self.tokens.calibrated(self._history.estimated_tokens_since(mark))
        return self.tokens.calibrated(parts.overhead(self.tokens) + self._history.estimated_tokens)

    def token_count_event(self, parts: RequestParts) -> ev.TokenCount:
        return ev.TokenCount(
            last=self.last_usage or Usage(),
            total=self.total_usage,
            context_used=self.context_tokens(parts),
            context_window=self.effective_window,
            counting_method=self.tokens.counting_method,
            accuracy=self.tokens.accuracy,
            compact_at=self.auto_compact_limit,
        )

    # --- the window and its thresholds ----------------------------------------------------

    @property
    def effective_window(self) -> int:
        return effective_window(self.window.tokens)

    @property
    def auto_compact_setting(self) -> AutoCompactSetting:
        """The auto-compaction threshold in force: ``/autocompact``'s, else the config's."""
        config = self._config
        return self._compaction.setting or AutoCompactSetting(
            config.auto_compact, config.auto_compact_percent, config.auto_compact_token_limit
        )

    def set_auto_compact(self, *, enabled: bool, percent: int | None = None, tokens: int | None = None) -> None:
        """``/autocompact``: the threshold for the rest of the session (a percentage of the usable
        window, or tokens; the config keys as today). A compaction that could not help is tried again."""
        setting = replace(self.auto_compact_setting, enabled=enabled)
        if percent is not None:
            setting = replace(setting, percent=percent, token_limit=None)
        if tokens is not None:
            setting = replace(setting, token_limit=tokens)
        self._compaction.setting = setting
        self._compaction.history_len_after = None

    @property
    def auto_compact_limit(self) -> int | None:
        """Context tokens at which auto-compaction starts; None when auto-compaction is off."""
        setting = self.auto_compact_setting
        return auto_compact_limit(
            self.window.tokens, enabled=setting.enabled, percent=setting.percent, token_limit=setting.token_limit
        )

    @property
    def tool_output_limit(self) -> int:
        """Tokens one tool output keeps in the context (the rest goes to its spill file)."""
        config = self._config
        return tool_output_limit(
            config.tool_output_token_limit, self.window.tokens, explicit="tool_output_token_limit" in config.raw
        )

    # --- one request -----------------------------------------------------------------------

    def count_sent(self, parts: RequestParts) -> int:
        """Our count of the request in flight: its fixed parts and the history it carried."""
        history = self._history
        return (
            parts.overhead(self.tokens)
            + history.estimated_tokens
            - history.estimated_tokens_since(self.window.sent_items)
        )

    def before_request(self, parts: RequestParts, client: Callable[[], ModelClient]) -> None:
        """Note what is being sent, for calibration; on the first request, ask the server its window."""
        window = self.window
        window.sent_items = len(self._history)
        window.sent_tokens = self.count_sent(parts)
        window.sent_exactly = self.tokens.exact
        window.start_discovery(client)

    async def after_response(self, parts: RequestParts, usage: Usage | None, emit: Emit) -> None:
        """Check a usage report against what was sent: calibrate, or detect a silent cut."""
        window = self.window
        await window.settle_discovery(emit)
        if usage is None or window.sent_tokens <= 0:
            return
        if usage.input_tokens <= 0:  # no count (some local servers send zeros): estimate the context
            self.distrust_last_usage()
            return
        counter = self.tokens
        reported = usage.input_tokens
        if reported < counter.calibrated(window.sent_tokens) * TRUNCATION_SHARE and window.would_shrink(reported):
            # Confirmed with exact counts before the window shrinks. A cut the estimate misses is
            # seen a request or two later (the server keeps as much of a growing prompt), or at
            # once after the tokenizer loads near the compaction threshold.
            await self.count_exactly()
        if counter.exact and not window.sent_exactly:  # counting turned exact while the request was out
            window.sent_tokens = self.count_sent(parts)  # never an estimate against exact counts
        expected = counter.calibrated(window.sent_tokens)
        if reported < expected * TRUNCATION_SHARE:
            window.prompt_was_cut(reported, expected, emit)
            # Either way it counted less than we send: the context is estimated, so a report far
            # too small never keeps a compaction from starting.
            self.distrust_last_usage()
            return  # a cut prompt says nothing about the tokenizer
        counter.observe(reported, window.sent_tokens)
        self._learned.calibration_changed(window.model, counter.calibration)

    # --- a resumed session -----------------------------------------------------------------

    def restore(self, learned: Learned) -> None:
        """What a resumed file's learned lines said (session/learned.py): calibration per model, the
        current model's window, the last compaction, the running totals."""
        for model, (ratio, reports) in learned.calibrations.items():
            self.counter_for(model).calibration.restore(ratio, reports)
        if (window := learned.windows.get(self.window.model)) is not None:
            self.window.restore(*window)
        compaction = self._compaction
        if learned.compaction is not None:
            compaction.history_len_after, compaction.tokens_after = learned.compaction
        if learned.usage is not None:
            self.total_usage = learned.usage
        compaction.last = learned.shown

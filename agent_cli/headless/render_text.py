"""Human-readable progress for `agent exec`, written to stderr."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any

from agent_cli import events as ev
from agent_cli.commands.context_usage import format_context_table
from agent_cli.display import command_output, command_preview
from agent_cli.event_handlers import ByEventType
from agent_cli.terminal_text import terminal_safe
from agent_cli.tools.mcp_names import display_call

STYLES = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "magenta": "35"}
PREVIEW_LINES = 6
WAITING_EVERY_S = 10  # a "waiting for the model" line every this many seconds of silence


renders: ByEventType[Callable[[TextRenderer, Any], None]] = ByEventType()  # one method per event type below


class TextRenderer:
    def __init__(self, out: IO[str], color: bool = False):
        self.out = out
        self.color = color
        self._in_reasoning = False
        self._prefix = ""  # "[agent] " while a subagent's event is rendered
        self._last_tokens = ""  # the last token line printed
        self._just_begun: str | None = None  # the call whose header is the last line printed
        self._running: dict[str, str] = {}  # calls begun and not ended, with the prefix of their session

    def style(self, text: str, name: str | None) -> str:
        return f"\x1b[{STYLES[name]}m{text}\x1b[0m" if self.color and name else text

    def line(self, text: str = "", style: str | None = None) -> None:
        """Write a line of text made terminal-safe (a model's or a command's escape sequences
        never reach the terminal), then coloured with ``style`` when colour is on."""
        self._just_begun = None
        if self._prefix:
            text = "\n".join(self._prefix + part for part in text.split("\n"))
        self.out.write(self.style(terminal_safe(text), style) + "\n")
        self.out.flush()

    def session_started(self, session) -> None:
        config = session.config
        self.line(f"agent · {session.model} via {config.provider.id} · {config.cwd} · mode {session.mode}", "dim")

    def finished(self) -> None:
        pass

    def render(self, event: ev.Event) -> None:
        if (handler := renders.get(event)) is not None:
            handler(self, event)

    @renders(ev.UserMessage)
    def _user_message(self, event: ev.UserMessage) -> None:
        self.line("user", "cyan")
        self.line(event.text if event.typed is None else event.typed)
        if images := event.images:
            self.line(f"(with image{'s' if len(images) > 1 else ''}: {', '.join(images)})", "dim")
        if event.typed is not None:  # @files, !`cmd` output or a command's prompt were sent too
            self.line(f"(sent as {len(event.text):,} characters after expansion)", "dim")

    @renders(ev.ReasoningDone)
    def _reasoning(self, event: ev.ReasoningDone) -> None:
        self.line("thinking", "magenta")
        self.line(event.text, "dim")

    @renders(ev.Refusal)
    def _refusal(self, event: ev.Refusal) -> None:
        self.line("refusal: the model declined to answer", "yellow")
        self.line(event.text)

    @renders(ev.AgentMessage)
    def _agent_message(self, event: ev.AgentMessage) -> None:
        self.line("agent", "magenta")
        self.line(event.text)

    @renders(ev.ToolCallBegin)
    def _tool_begin(self, event: ev.ToolCallBegin) -> None:
        self.line(f"▶ {describe_call(event.name, event.arguments)}", "bold")
        self._just_begun = event.call_id
        self._running[event.call_id] = self._prefix

    @renders(ev.PlanUpdated)
    def _plan(self, event: ev.PlanUpdated) -> None:
        marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
        self.line("plan", "cyan")
        for step in event.plan:
            self.line(f"  {marks[step.status]} {step.step}")

    @renders(ev.Retry)
    def _retry(self, event: ev.Retry) -> None:
        self.line(f"retrying ({event.attempt}/{event.max_attempts}) in {event.delay:.1f}s: {event.reason}", "yellow")

    @renders(ev.ModelWaiting)
    def _waiting(self, event: ev.ModelWaiting) -> None:
        if round(event.seconds) % WAITING_EVERY_S == 0:
            self.line(f"waiting for the model… {event.seconds:.0f} s", "dim")

    @renders(ev.NetworkRequest)
    def _network_request(self, event: ev.NetworkRequest) -> None:
        if not event.allowed:  # what was allowed is the lists' business; a refusal, the reader's
            self.line(f"network: refused {event.host}:{event.port} ({event.by})", "yellow")

    @renders(ev.Warning)
    def _warning(self, event: ev.Warning) -> None:
        self.line(f"warning: {event.message}", "yellow")

    @renders(ev.Error, ev.InputRejected)
    def _error(self, event: ev.Error | ev.InputRejected) -> None:
        self.line(f"error: {event.message}", "red")

    @renders(ev.WebSearch)
    def _web_search(self, event: ev.WebSearch) -> None:
        sources = event.sources
        self.line(f"🔎 web search: {event.query}" + (f" ({len(sources)} results)" if sources else ""), "bold")

    @renders(ev.WebCitations)
    def _citations(self, event: ev.WebCitations) -> None:
        self.line("sources: " + ", ".join(source.url for source in event.sources), "dim")

    @renders(ev.Notice)
    def _notice(self, event: ev.Notice) -> None:
        if event.title:
            self.line(event.title, "cyan")
        self.line(event.text)

    @renders(ev.CompactionStarted)
    def _compaction_started(self, event: ev.CompactionStarted) -> None:
        self.line(f"compacting the conversation ({event.trigger})…", "yellow")

    @renders(ev.CompactionFinished)
    def _compaction_finished(self, event: ev.CompactionFinished) -> None:
        self.line(describe_compaction(event), "yellow")

    @renders(ev.TokenCount)
    def _tokens(self, event: ev.TokenCount) -> None:
        text = f"tokens: {event.context_used:,} used of {event.context_window:,} ({event.percent_left}% context left)"
        if text != self._last_tokens:  # a subagent's responses change the totals, not this context
            self._last_tokens = text
            self.line(text, "dim")

    @renders(ev.TurnAborted)
    def _aborted(self, event: ev.TurnAborted) -> None:
        self.line(f"turn aborted: {event.reason}", "red")

    @renders(ev.TurnFailed)
    def _failed(self, event: ev.TurnFailed) -> None:
        if isinstance(event.reason, str):  # a limit; model errors came as Error
            self.line(event.message, "red")

    @renders(ev.SubagentEvent)
    def _subagent(self, event: ev.SubagentEvent) -> None:
        self._subagent_event(event.agent, event.event)

    @renders(ev.CheckpointCreated)
    def _checkpoint(self, event: ev.CheckpointCreated) -> None:
        text = f"checkpoint {event.checkpoint_id} saved ({event.files:,} files; /undo takes the turn back)"
        self.line(self.style(text, "dim"))

    @renders(ev.SubagentFinished)
    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.line(f"[{event.agent}] {event.status} ({event.usage.total_tokens:,} tokens)", "dim")

    @renders(ev.Diagnostics)
    def _diagnostics(self, event: ev.Diagnostics) -> None:
        self.line(f"  diagnostics ({', '.join(event.servers)}):", "yellow")
        for line in event.lines:
            self.line(f"    {line}", "yellow")

    @renders(ev.ProjectCheck)
    def _project_check(self, event: ev.ProjectCheck) -> None:
        code = event.exit_code
        verdict = "passed" if code == 0 else "timed out" if code is None else f"failed (exit {code})"
        self.line(f"{event.kind}: `{event.command}` {verdict}", "dim" if code == 0 else "red")
        if code != 0:
            self.line("\n".join(event.tail.splitlines()[-10:]), "dim")

    @renders(ev.ContextUsage)
    def _context(self, event: ev.ContextUsage) -> None:
        self.line("context", "cyan")
        self.line(format_context_table(event))

    def _subagent_event(self, agent: str, event: ev.Event) -> None:
        """A subagent's progress, each line prefixed with its name; its prompt and token counts
        are left out (the task call shows the one, the session totals include the other)."""
        if isinstance(event, (ev.UserMessage, ev.TokenCount, ev.TurnAborted)):
            return
        outer, self._prefix = self._prefix, f"{self._prefix}[{agent}] "
        try:
            self.render(event)
        finally:
            self._prefix = outer

    @renders(ev.ToolCallEnd)
    def _tool_end(self, event: ev.ToolCallEnd) -> None:
        self._running.pop(event.call_id, None)
        together = self._prefix in self._running.values()  # another call of the same session still runs
        named = event.call_id != self._just_begun or together  # so say which call this result is
        status = "ok" if event.success else "failed"
        if event.exit_code is not None:
            status = f"exit {event.exit_code}"
        color = "green" if event.success else "red"
        status = f"  {status} in {event.duration:.1f}s"
        if named:
            status += f" · {describe_call(event.name, event.arguments)}"
        self.line(status, color)
        for change in event.changes:
            self.line(f"  {change.kind} {change.path}" + (f" → {change.move_to}" if change.move_to else ""))
        lines = command_output(event.output).splitlines()  # the status line above says the rest
        shown = (
            lines if len(lines) <= PREVIEW_LINES else lines[: PREVIEW_LINES // 2] + ["…"] + lines[-PREVIEW_LINES // 2 :]
        )
        for text in shown:
            self.line(f"  │ {text[:200]}", "dim")


def describe_call(name: str, args: dict) -> str:
    if name == "shell":
        return f"$ {command_preview(str(args.get('command', '')))}"
    if name == "apply_patch":
        return "apply_patch"
    if mcp_call := display_call(name, args):
        return mcp_call
    if name == "task":
        return f"task {args.get('agent', '?')}: {args.get('description', '')}"
    details = ", ".join(f"{key}={value!r}" for key, value in args.items() if key != "patch")
    return f"{name}({details})"


def describe_compaction(event: ev.CompactionFinished) -> str:
    if not event.applied:
        return f"compaction did not shrink the context ({event.tokens_before:,} tokens); kept the history as it was"
    text = f"compacted {event.tokens_before:,} → {event.tokens_after:,} tokens ({event.items_before} → {event.items_after} items)"
    if event.trimmed:
        text += f"; {event.trimmed} oldest item(s) trimmed to fit the summary request"
    if event.fallback:
        text += "; the summarizer failed, so a head-and-tail truncation was used"
    return text

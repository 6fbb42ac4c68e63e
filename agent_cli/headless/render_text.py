"""Human-readable progress for `agent exec`, written to stderr."""

from __future__ import annotations

from typing import IO

from agent_cli import events as ev
from agent_cli.commands.context_usage import format_context_table
from agent_cli.display import command_output, command_preview
from agent_cli.terminal_text import terminal_safe
from agent_cli.tools.mcp_names import display_call

STYLES = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "magenta": "35"}
PREVIEW_LINES = 6
WAITING_EVERY_S = 10  # a "waiting for the model" line every this many seconds of silence


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
        match event:
            case ev.UserMessage(text=text, typed=typed, images=images):
                self.line("user", "cyan")
                self.line(text if typed is None else typed)
                if images:
                    self.line(f"(with image{'s' if len(images) > 1 else ''}: {', '.join(images)})", "dim")
                if typed is not None:  # @files, !`cmd` output or a command's prompt were sent too
                    self.line(f"(sent as {len(text):,} characters after expansion)", "dim")
            case ev.ReasoningDone(text=text):
                self.line("thinking", "magenta")
                self.line(text, "dim")
            case ev.Refusal(text=text):
                self.line("refusal: the model declined to answer", "yellow")
                self.line(text)
            case ev.AgentMessage(text=text):
                self.line("agent", "magenta")
                self.line(text)
            case ev.ToolCallBegin(call_id=call_id, name=name, arguments=args):
                self.line(f"▶ {describe_call(name, args)}", "bold")
                self._just_begun = call_id
                self._running[call_id] = self._prefix
            case ev.ToolCallEnd():
                self._tool_end(event)
            case ev.PlanUpdated(plan=plan):
                marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
                self.line("plan", "cyan")
                for step in plan:
                    self.line(f"  {marks[step.status]} {step.step}")
            case ev.Retry(attempt=attempt, max_attempts=most, delay=delay, reason=reason):
                self.line(f"retrying ({attempt}/{most}) in {delay:.1f}s: {reason}", "yellow")
            case ev.ModelWaiting(seconds=seconds) if round(seconds) % WAITING_EVERY_S == 0:
                self.line(f"waiting for the model… {seconds:.0f} s", "dim")
            case ev.Warning(message=message):
                self.line(f"warning: {message}", "yellow")
            case ev.Error(message=message):
                self.line(f"error: {message}", "red")
            case ev.WebSearch(query=query, sources=sources):
                self.line(f"🔎 web search: {query}" + (f" ({len(sources)} results)" if sources else ""), "bold")
            case ev.WebCitations(sources=sources):
                self.line("sources: " + ", ".join(source.url for source in sources), "dim")
            case ev.Notice(text=text, title=title):
                if title:
                    self.line(title, "cyan")
                self.line(text)
            case ev.CompactionStarted(trigger=trigger):
                self.line(f"compacting the conversation ({trigger})…", "yellow")
            case ev.CompactionFinished():
                self.line(describe_compaction(event), "yellow")
            case ev.TokenCount():
                text = f"tokens: {event.context_used:,} used of {event.context_window:,} ({event.percent_left}% context left)"
                if text != self._last_tokens:  # a subagent's responses change the totals, not this context
                    self._last_tokens = text
                    self.line(text, "dim")
            case ev.TurnAborted(reason=reason):
                self.line(f"turn aborted: {reason}", "red")
            case ev.TurnFailed(message=message, reason=str()):  # a limit; model errors came as Error
                self.line(message, "red")
            case ev.InputRejected(message=message):
                self.line(f"error: {message}", "red")
            case ev.SubagentEvent(agent=agent, event=inner):
                self._subagent_event(agent, inner)
            case ev.CheckpointCreated(files=files):
                self.line(
                    self.style(
                        f"checkpoint {event.checkpoint_id} saved ({files:,} files; /undo takes the turn back)", "dim"
                    )
                )
            case ev.SubagentFinished(agent=agent, status=status, usage=usage):
                self.line(f"[{agent}] {status} ({usage.total_tokens:,} tokens)", "dim")
            case ev.ContextUsage():
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

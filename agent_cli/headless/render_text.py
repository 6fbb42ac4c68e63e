"""Human-readable progress for `agent exec`, written to stderr."""

from __future__ import annotations

from typing import IO

from agent_cli import events as ev
from agent_cli.display import command_output, command_preview
from agent_cli.mcp.names import display_call

STYLES = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "magenta": "35"}
PREVIEW_LINES = 6
WAITING_EVERY_S = 10  # a "waiting for the model" line every this many seconds of silence


class TextRenderer:
    def __init__(self, out: IO[str], color: bool = False):
        self.out = out
        self.color = color
        self._in_reasoning = False
        self._prefix = ""  # "[agent] " while a subagent's event is rendered

    def style(self, text: str, name: str) -> str:
        return f"\x1b[{STYLES[name]}m{text}\x1b[0m" if self.color else text

    def line(self, text: str = "") -> None:
        if self._prefix:
            text = "\n".join(self._prefix + part for part in text.split("\n"))
        self.out.write(text + "\n")
        self.out.flush()

    def session_started(self, session) -> None:
        config = session.config
        self.line(self.style(f"agent · {session.model} via {config.provider.id} · {config.cwd} · mode {session.mode}", "dim"))

    def finished(self) -> None:
        pass

    def render(self, event: ev.Event) -> None:
        match event:
            case ev.UserMessage(text=text, typed=typed, images=images):
                self.line(self.style("user", "cyan"))
                self.line(text if typed is None else typed)
                if images:
                    self.line(self.style(f"(with image{'s' if len(images) > 1 else ''}: {', '.join(images)})", "dim"))
                if typed is not None:  # @files, !`cmd` output or a command's prompt were sent too
                    self.line(self.style(f"(sent as {len(text):,} characters after expansion)", "dim"))
            case ev.ReasoningDone(text=text):
                self.line(self.style("thinking", "magenta"))
                self.line(self.style(text, "dim"))
            case ev.AgentMessage(text=text):
                self.line(self.style("agent", "magenta"))
                self.line(text)
            case ev.ToolCallBegin(name=name, arguments=args):
                self.line(self.style(f"▶ {describe_call(name, args)}", "bold"))
            case ev.ToolCallEnd():
                self._tool_end(event)
            case ev.PlanUpdated(plan=plan):
                marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
                self.line(self.style("plan", "cyan"))
                for step in plan:
                    self.line(f"  {marks[step.status]} {step.step}")
            case ev.Retry(attempt=attempt, max_attempts=most, delay=delay, reason=reason):
                self.line(self.style(f"retrying ({attempt}/{most}) in {delay:.1f}s: {reason}", "yellow"))
            case ev.ModelWaiting(seconds=seconds) if round(seconds) % WAITING_EVERY_S == 0:
                self.line(self.style(f"waiting for the model… {seconds:.0f} s", "dim"))
            case ev.Warning(message=message):
                self.line(self.style(f"warning: {message}", "yellow"))
            case ev.Error(message=message):
                self.line(self.style(f"error: {message}", "red"))
            case ev.Notice(text=text, title=title):
                if title:
                    self.line(self.style(title, "cyan"))
                self.line(text)
            case ev.CompactionStarted(trigger=trigger):
                self.line(self.style(f"compacting the conversation ({trigger})…", "yellow"))
            case ev.CompactionFinished():
                self.line(self.style(describe_compaction(event), "yellow"))
            case ev.TokenCount():
                self.line(self.style(
                    f"tokens: {event.context_used:,} used of {event.context_window:,} "
                    f"({event.percent_left}% context left)", "dim"))
            case ev.TurnAborted(reason=reason):
                self.line(self.style(f"turn aborted: {reason}", "red"))
            case ev.InputRejected(message=message):
                self.line(self.style(f"error: {message}", "red"))
            case ev.SubagentEvent(agent=agent, event=inner):
                self._subagent_event(agent, inner)
            case ev.SubagentFinished(agent=agent, status=status, usage=usage):
                self.line(self.style(f"[{agent}] {status} ({usage.total_tokens:,} tokens)", "dim"))
            case ev.ContextUsage():
                from agent_cli.commands.context_usage import format_context_table

                self.line(self.style("context", "cyan"))
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
        status = "ok" if event.success else "failed"
        if event.exit_code is not None:
            status = f"exit {event.exit_code}"
        color = "green" if event.success else "red"
        self.line(self.style(f"  {status} in {event.duration:.1f}s", color))
        for change in event.changes:
            self.line(f"  {change.kind} {change.path}" + (f" → {change.move_to}" if change.move_to else ""))
        lines = command_output(event.output).splitlines()  # the status line above says the rest
        shown = lines if len(lines) <= PREVIEW_LINES else lines[: PREVIEW_LINES // 2] + ["…"] + lines[-PREVIEW_LINES // 2 :]
        for text in shown:
            self.line(self.style(f"  │ {text[:200]}", "dim"))


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

"""Turns core events into transcript cells, updating cells in place while they stream.

The app owns lifecycle (running state, approvals, the status bar); this class owns only what
the transcript shows, so it can be driven by any event stream (a turn, /compact, a benchmark).
Events are made terminal-safe once on their way to the screen (``agent_cli/terminal_text.py``):
a live event by the app as it arrives (the approval dialog shows it too), so :meth:`render`
takes it as it is; events replayed from a session file go through :meth:`replay`, which does it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.event_handlers import ByEventType
from agent_cli.terminal_text import terminal_safe, terminal_safe_event
from agent_cli.tui.formatting import compaction_text
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.context_usage_view import ContextUsageView
from agent_cli.tui.widgets.diff_view import DiffView
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.plan_view import PlanView
from agent_cli.tui.widgets.reasoning_cell import ReasoningCell
from agent_cli.tui.widgets.subagent_cell import SubagentCell
from agent_cli.tui.widgets.tool_cell import ToolCell
from agent_cli.tui.widgets.transcript import Transcript
from agent_cli.tui.widgets.user_message import UserMessage

HIDDEN_TOOL_CELLS = ("update_plan",)  # shown as the plan checklist instead
DIFF_NOTICES = ("diff", "undo", "rewind")  # notices that end with a git diff (/diff, what /undo takes back)


renders: ByEventType[Callable[[EventRenderer, Any], Awaitable[None]]] = ByEventType()  # one method per event type


class EventRenderer:
    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.message: AssistantMessage | None = None
        self.reasoning: ReasoningCell | None = None
        self.tools: dict[str, ToolCell] = {}  # a SubagentCell for a task call
        self.pending_user: str | None = None  # shown when typed; its UserMessage event is not shown again
        self.muted = False  # Esc: the answer and reasoning being streamed show nothing more

    def halt(self) -> None:
        """Esc was read (on the terminal's input thread): flags only, so that nothing more of
        the answer is drawn from now on; :meth:`stop_streaming` follows on the event loop."""
        self.muted = True
        if (message := self.message) is not None:
            message.halt()

    def stop_streaming(self) -> None:
        """Esc: show nothing more of what streams, from this moment (the turn's own end,
        TurnAborted, comes after the session has stopped it)."""
        self.muted = True
        if self.message is not None:
            self.message.stop()

    def unmute(self) -> None:
        """Work starts again (a new prompt or command): what it streams is shown."""
        self.muted = False

    async def render(self, event: ev.Event) -> None:
        """Show ``event``, already made terminal-safe (``AgentApp.handle_event`` does it)."""
        if (handler := renders.get(event)) is not None:
            await handler(self, event)

    async def replay(self, events: Iterable[ev.Event]) -> None:
        """Show events read back from a session file: no escape sequence in them reaches the terminal."""
        for event in events:
            await self.render(terminal_safe_event(event))

    @renders(ev.UserMessage)
    async def _user_message(self, event: ev.UserMessage) -> None:
        shown = event.typed or event.text
        if self.pending_user is not None and shown.strip() == self.pending_user.strip():
            self.pending_user = None
        else:
            await self.transcript.add(UserMessage(shown + attached_names(event.images)))

    @renders(ev.TextDelta)
    async def _text_delta(self, event: ev.TextDelta) -> None:
        if self.muted:
            return
        await self._close_reasoning()
        if self.message is None:
            self.message = AssistantMessage()
            await self.transcript.add(self.message)
        await self.message.write(event.text)

    @renders(ev.AgentMessage)
    async def _agent_message(self, event: ev.AgentMessage) -> None:
        if isinstance(event, ev.Refusal):
            await self.notice("The model declined to answer (refusal).", "warning")
        await self._close_reasoning()
        if self.message is None:
            if event.text.strip():
                await self.transcript.add(AssistantMessage(event.text))
        else:
            await self.message.finish(event.text)
        self.message = None
        if self.citations:  # the web sources this answer cites, below it
            await self.notice(sources_text(self.citations), "info", "sources")
            self.citations = ()

    @renders(ev.WebSearch)
    async def _web_search(self, event: ev.WebSearch) -> None:
        await self._close_reasoning()
        await self.notice(web_search_text(event.query, event.sources, event.status), "info", "web search")

    @renders(ev.WebCitations)
    async def _citations(self, event: ev.WebCitations) -> None:
        self.citations = event.sources

    @renders(ev.ReasoningDelta)
    async def _reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        if self.muted:
            return
        if self.reasoning is None:
            self.reasoning = ReasoningCell()
            await self.transcript.add(self.reasoning)
        self.reasoning.append(event.text)

    @renders(ev.ReasoningDone)
    async def _reasoning_done(self, event: ev.ReasoningDone) -> None:
        if self.reasoning is None:
            self.reasoning = ReasoningCell(event.text)
            await self.transcript.add(self.reasoning)
        await self._close_reasoning(event.text)

    @renders(ev.ToolCallBegin)
    async def _tool_begin(self, event: ev.ToolCallBegin) -> None:
        await self.end_streaming()
        if event.name not in HIDDEN_TOOL_CELLS:
            cell = (SubagentCell if event.name == "task" else ToolCell)(event.call_id, event.name, event.arguments)
            self.tools[event.call_id] = cell
            await self.transcript.add(cell)

    @renders(ev.ToolOutputDelta)
    async def _tool_output(self, event: ev.ToolOutputDelta) -> None:
        if cell := self.tools.get(event.call_id):
            cell.append_output(event.text, event.skipped_bytes)

    @renders(ev.ToolCallEnd)
    async def _tool_end(self, event: ev.ToolCallEnd) -> None:
        if cell := self.tools.pop(event.call_id, None):
            cell.finish(event)
        elif not event.success and event.name in HIDDEN_TOOL_CELLS:
            await self.notice(f"{event.name} failed: {event.output}", "error")

    @renders(ev.SubagentEvent)
    async def _subagent_event(self, event: ev.SubagentEvent) -> None:
        if isinstance(cell := self.tools.get(event.call_id), SubagentCell):
            cell.child_event(event.event)

    @renders(ev.SubagentFinished)
    async def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        if isinstance(cell := self.tools.get(event.call_id), SubagentCell):
            cell.subagent_finished(event)

    @renders(ev.PlanUpdated)
    async def _plan(self, event: ev.PlanUpdated) -> None:
        await self.transcript.add(PlanView(event))

    @renders(ev.Retry)
    async def _retry(self, event: ev.Retry) -> None:
        await self._drop_partial()
        text = f"{event.reason} — retrying in {event.delay:.0f}s (attempt {event.attempt}/{event.max_attempts})"
        await self.notice(text, "retry")

    @renders(ev.Warning)
    async def _warning(self, event: ev.Warning) -> None:
        await self.notice(event.message, "warning")

    @renders(ev.Error)
    async def _error(self, event: ev.Error) -> None:
        await self.end_streaming()
        await self.notice(event.message, "error")

    @renders(ev.Notice)
    async def _notice(self, event: ev.Notice) -> None:
        head, diff = split_diff(event.text) if event.title in DIFF_NOTICES else (event.text, "")
        await self.notice(head, "info", event.title)
        if diff:  # numbered and coloured as every other diff
            await self.transcript.add(DiffView(diff, classes="notice-diff"))

    @renders(ev.InputRejected)
    async def _rejected(self, event: ev.InputRejected) -> None:
        await self.notice(event.message, "error")

    @renders(ev.Diagnostics)
    async def _diagnostics(self, event: ev.Diagnostics) -> None:  # under the edit's cell, which is the last one
        await self.notice("\n".join(event.lines), "warning", f"new problems ({', '.join(event.servers)})")

    @renders(ev.ProjectCheck)
    async def _project_check(self, event: ev.ProjectCheck) -> None:
        await self.notice(*project_check_notice(event))

    @renders(ev.ContextUsage)
    async def _context(self, event: ev.ContextUsage) -> None:
        await self.transcript.add(ContextUsageView(event))

    @renders(ev.CompactionStarted)
    async def _compaction_started(self, event: ev.CompactionStarted) -> None:
        await self.end_streaming()
        what = "compacting the conversation" if event.trigger == "manual" else "context is filling up; compacting"
        await self.notice(what + "…", "context")

    @renders(ev.CompactionFinished)
    async def _compaction_finished(self, event: ev.CompactionFinished) -> None:
        await self.notice(compaction_text(event), "context")

    @renders(ev.TurnAborted)
    async def _aborted(self, event: ev.TurnAborted) -> None:
        await self.end_streaming()
        self._close_tools()
        await self.notice(event.reason, "warning")

    @renders(ev.TurnFailed, ev.TurnComplete)
    async def _turn_ended(self, event: ev.TurnFailed | ev.TurnComplete) -> None:
        await self.end_streaming()
        self._close_tools()

    citations: tuple = ()  # sources of the answer being streamed, shown once it is finished

    async def user_message(self, text: str, images: tuple[Path, ...] = ()) -> None:
        """Show what the user sent at once, before the core echoes it."""
        self.pending_user = text
        await self.transcript.add(UserMessage(text + attached_names(path.name for path in images)))

    async def notice(self, text: str, kind: str = "info", title: str | None = None) -> None:
        await self.transcript.add(NoticeCell(terminal_safe(text), kind, title))  # type: ignore[arg-type]

    async def end_streaming(self) -> None:
        """Finish whatever streams: a message without its AgentMessage stays as it streamed."""
        await self._close_reasoning()
        if self.message is not None:
            await self.message.finish()
            self.message = None

    async def _close_reasoning(self, text: str | None = None) -> None:
        if self.reasoning is not None:
            self.reasoning.finish(text)
            self.reasoning = None

    async def _drop_partial(self) -> None:
        """A retried request starts over: what streamed from the failed attempt goes away."""
        for cell in (self.message, self.reasoning):
            if cell is not None:
                if isinstance(cell, AssistantMessage):
                    await cell.finish()
                await self.transcript.discard(cell)
        self.message = None
        self.reasoning = None

    def _close_tools(self) -> None:
        """Tool cells whose end never came (the turn was stopped) stop saying 'running'."""
        for call_id, cell in list(self.tools.items()):
            cell.finish(ev.ToolCallEnd(call_id, cell.tool_name, cell.arguments, "(stopped)", False, 0.0))
        self.tools.clear()


def project_check_notice(event: ev.ProjectCheck) -> tuple[str, str, str]:
    """A lint/test command's run: passed in one line; a failure with the end of its output."""
    if event.exit_code == 0:
        return f"`{event.command}` passed ({event.duration:.1f} s)", "info", event.kind
    verdict = "timed out" if event.exit_code is None else f"failed (exit {event.exit_code})"
    then = "; sent to the model" if event.sent_to_model else ""
    tail = "\n".join(event.tail.splitlines()[-12:])
    return f"`{event.command}` {verdict}{then}\n{tail}", "error", event.kind


def split_diff(text: str) -> tuple[str, str]:
    """A notice's words and the git diff that follows them ("" when there is none)."""
    at = 0 if text.startswith("diff --git ") else text.find("\ndiff --git ") + 1
    if at == 0 and not text.startswith("diff --git "):
        return text, ""
    return text[:at].rstrip(), text[at:]


def attached_names(names: Iterable[str]) -> str:
    """The images sent with a message, one line each under its text."""
    return "".join(f"\n🖼 {name}" for name in names)


def web_search_text(query: str, sources, status: str) -> str:
    head = f"🔎 {query or '(no query reported)'}" + ("" if status == "completed" else f" ({status})")
    return "\n".join(
        [
            head,
            *(
                f"  {source.title or source.url}  {source.url if source.title else ''}".rstrip()
                for source in sources[:8]
            ),
        ]
    )


def sources_text(sources) -> str:
    return "\n".join(
        f"[{n}] {source.title + ' — ' if source.title else ''}{source.url}" for n, source in enumerate(sources, 1)
    )

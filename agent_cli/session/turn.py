"""One turn: sample the model, run the tools it calls (``tool_call.py``), repeat until it answers in text."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.context.fragments import BACKGROUND_EXITS
from agent_cli.context.prompts import prompt_library
from agent_cli.items import Image, Item, Message, Reasoning, ToolCall, ToolOutput, developer, user
from agent_cli.models import base as stream
from agent_cli.models.base import CUT_OFF, STOP_END, STOP_PAUSED, STOP_REFUSAL, Prompt, ToolSpec
from agent_cli.models.errors import ContextWindowExceeded, ModelError
from agent_cli.models.web_search import WebCitations, WebSearchDone
from agent_cli.session import hooks
from agent_cli.session.compaction import auto_compact_if_needed, recover_from_overflow, reject_oversized_input
from agent_cli.session.compaction_plan import note_request
from agent_cli.session.memory_recall import recall_into_history
from agent_cli.session.model_wait import with_wait_notices
from agent_cli.session.request_parts import RequestParts
from agent_cli.session.run_limits import LimitReached
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState
from agent_cli.session.state import Emit
from agent_cli.session.structured_output import StructuredOutputFailed, settle
from agent_cli.session.tool_call import run_tool_calls
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tools.base import ToolError
from agent_cli.tools.registry import parse_arguments


async def run_turn(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    text: str,
    emit: Emit,
    typed: str | None = None,
    images: tuple[Image, ...] = (),
    recall: str | None = None,
) -> None:
    """One turn for ``text`` (with any attached ``images``); ``typed`` is what the user typed
    when expansion changed it; ``recall`` what memory recall searches with (default: what was typed).
    The session has recorded the initial context (or what changed in the environment) before."""
    meter = state.meter
    if meter.tokens.load_started:  # the TUI loads the tokenizer early; otherwise it waits for a limit
        await meter.count_exactly()
    if await reject_oversized_input(turn, state, text, emit):
        return
    if not await hooks.before_prompt(turn, state, services, text, emit):  # SessionStart, UserPromptSubmit
        return
    state.record(Message("user", text, images=images, typed=typed))  # typed: what `agent sessions` lists
    services.checkpoints.turn_started(turn.number, len(state.history) - 1, typed or text)
    emit(ev.UserMessage(text, typed, tuple(image.name for image in images)))
    for fragment in state.skill_fragments(text):
        state.record(user(fragment))
    query = typed or text if recall is None else recall
    recall_into_history(turn.config, state.history, services.memory, query, emit)  # <memories>, after the message
    if services.mcp is not None:  # servers still starting are waited for; the tool list is set for the turn
        await services.mcp.sync(emit, meter.tokens, meter.count_exactly)
        for note in services.mcp.take_model_notes():  # tools that appeared or went away
            state.record(developer(note))
    continued_after_cut_off = False
    while True:
        parts = state.request_parts(turn)  # once per request: what it sends besides the conversation
        try:
            parts = await auto_compact_if_needed(turn, state, services, parts, emit)
            try:
                output = await sample(turn, state, services, parts, emit)
            except ContextWindowExceeded as exc:
                recovered = await recover_from_overflow(
                    turn, state, services, emit, exc, lambda fresh: sample(turn, state, services, fresh, emit)
                )
                if recovered is None:
                    return
                parts, output = recovered
        except ModelError as exc:
            emit(ev.Error(str(exc), fatal=True))
            emit(ev.TurnFailed(str(exc), request_id=exc.request_id))
            return
        except LimitReached as exc:  # agent exec --max-turns / --max-budget-usd
            emit(ev.TurnFailed(str(exc), reason=exc.reason))
            return
        calls = [item for item in output if isinstance(item, ToolCall)]
        if not calls:
            stop = stop_reason_of(output)
            if stop == STOP_PAUSED:
                continue  # the server paused a long turn: sending the conversation again resumes it
            if stop in CUT_OFF and report_cut_off(turn, state, stop, emit, may_continue=not continued_after_cut_off):
                continued_after_cut_off = True
                continue
            messages = [item.text for item in output if isinstance(item, Message)]
            if await hooks.stop_blocked(turn, state, services, emit, messages[-1] if messages else None):
                continue  # a Stop hook keeps the agent working
            if await project_checks_failed(turn, state, services, emit):
                continue  # the model reads the failing lint/test command's output
            answer = messages[-1] if messages else None
            if turn.output_schema is not None:
                try:
                    answer = await settle(
                        turn.output_schema,
                        state.history,
                        answer,
                        emit,
                        lambda forced: sample(turn, state, services, parts, emit, forced),
                        forced_tool=turn.config.provider.wire_api == "anthropic",
                    )
                except (ModelError, LimitReached, StructuredOutputFailed) as exc:
                    emit(ev.TurnFailed(str(exc), reason=getattr(exc, "reason", "output_schema")))
                    return
            if state.inbox.waiting:
                continue  # the user added input meanwhile (Steer): the model reads it and goes on
            services.tool_use.turn_ended(answer, bool(parts.tools), emit)
            emit(ev.TurnComplete(answer, stop))
            return
        cut = cut_off_call(calls) if stop_reason_of(output) in CUT_OFF else None  # incomplete: never run it
        services.tool_use.called()
        await run_tool_calls(turn, state, services, parts.door, [call for call in calls if call is not cut], emit)
        if cut is not None:
            state.record(not_run(cut, emit))


class ModelOutput(list[Item]):
    """The output items of one response, and why it ended (``stop_reason``: models.base STOP_*)."""

    stop_reason: str = STOP_END


def stop_reason_of(output: list[Item]) -> str:
    return getattr(output, "stop_reason", STOP_END)


def report_cut_off(turn: TurnContext, state: SessionState, stop: str, emit: Emit, *, may_continue: bool) -> bool:
    """Tell the user an answer was cut off; in agent mode ask the model (once a turn) to go on.
    Returns whether it was asked."""
    cause = "the output token limit" if stop != "content_filter" else "the provider's content filter"
    if not may_continue or turn.mode != "agent" or stop == "content_filter":
        emit(ev.Warning(f"The answer was cut off by {cause} ({stop})."))
        return False
    emit(ev.Warning(f"The answer was cut off by {cause} ({stop}); asking the model to continue."))
    state.record(user(prompt_library(turn.config.agent_home).render("continue_cut_off.md")))
    return True


def cut_off_call(calls: list[ToolCall]) -> ToolCall | None:
    """In a response cut off by the output limit, the last call when its arguments are not a
    complete, non-empty object (a call cut before its arguments came reaches us as ``{}``)."""
    try:
        return None if parse_arguments(calls[-1].arguments) else calls[-1]
    except ToolError:
        return calls[-1]


def not_run(call: ToolCall, emit: Emit) -> ToolOutput:
    """The answer to a cut-off call: the model reads why it did not run, and can split the work."""
    emit(
        ev.Warning(
            f"The answer was cut off by the output token limit in the middle of a `{call.name}` call; it was not run."
        )
    )
    return ToolOutput(
        call.call_id,
        f"This `{call.name}` call was cut off by the output token limit before its "
        "arguments were complete, so it was not run. Send it again in smaller parts (for example "
        "several smaller patches or files).",
        success=False,
    )


async def sample(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    parts: RequestParts,
    emit: Emit,
    forced_tool: ToolSpec | None = None,
) -> ModelOutput:
    """Send one request with ``parts`` and record what comes back. Returns the output items.
    ``forced_tool`` is added to the tools and must be called (structured output on Messages)."""
    services.limits.before_request()
    hooks.flush_hook_context(state)  # context added by hooks, now that no tool call is open
    note_background_exits(state, services.background)
    take_steered(state, emit)
    meter = state.meter
    prompt = Prompt(
        parts.instructions,
        state.request_items(turn, emit),
        [*parts.tools, forced_tool] if forced_tool else list(parts.tools),
        output_schema=turn.output_schema if turn.config.provider.wire_api != "anthropic" else None,
        forced_tool=forced_tool.name if forced_tool else None,
        web_search=parts.web_search,
    )
    output = ModelOutput()
    note_request(state)  # how much the last step added: compaction looks one step ahead
    meter.before_request(parts, services.clients.current)  # what we sent, for calibration; asks the server its window
    client = services.clients.current()
    async for event in with_wait_notices(client.stream(prompt), emit):  # "waiting for the model… 30 s"
        if isinstance(event, stream.TextDelta):
            emit(ev.TextDelta(event.text))
        elif isinstance(event, stream.ReasoningDelta):
            emit(ev.ReasoningDelta(event.text))
        elif isinstance(event, stream.Retrying):
            emit(ev.Retry(event.attempt, event.max_attempts, event.delay, event.reason))
        elif isinstance(event, stream.ClientNotice):
            emit(ev.Warning(event.message))
        elif isinstance(event, WebSearchDone):
            emit(ev.WebSearch(event.call_id, event.query, event.sources, event.status))
        elif isinstance(event, WebCitations):
            emit(ev.WebCitations(event.sources))
        elif isinstance(event, stream.OutputItem):
            output.append(event.item)
        elif isinstance(event, stream.Completed):
            output.stop_reason = event.stop_reason
            said = ev.Refusal if event.stop_reason == STOP_REFUSAL else ev.AgentMessage  # a refusal: its own item
            for item in output:
                state.record(item)
                if isinstance(item, Message) and item.role == "assistant":
                    emit(said(item.text))
                elif isinstance(item, Reasoning) and item.text:
                    emit(ev.ReasoningDone(item.text))
            usage = meter.window.checked_usage(event.usage, emit)  # figures that cannot be true: None
            meter.record_usage(usage)
            if usage is not None:
                services.limits.count(usage)
            await meter.after_response(parts, usage, emit)
            emit(meter.token_count_event(parts))
    return output


async def project_checks_failed(turn: TurnContext, state: SessionState, services: SessionServices, emit: Emit) -> bool:
    """The project's lint/test commands after a turn that changed files (lsp/checks.py); a
    failure is recorded for the model, which goes on."""
    if services.checks is None or turn.agent_name is not None:
        return False
    limit = state.meter.tool_output_limit
    note = await services.checks.after_turn(
        turn.number, lambda: services.tool_context(turn.config, limit, "project-checks", emit), emit
    )
    if note is None:
        return False
    state.record(user(note))
    return True


def take_steered(state: SessionState, emit: Emit) -> None:
    """Input added to the running turn (Steer), as user messages before the next request."""
    for text, images in state.inbox.take():
        state.record(Message("user", text, images=images))
        emit(ev.UserMessage(text, None, tuple(image.name for image in images)))


def note_background_exits(state: SessionState, background: BackgroundProcesses) -> None:
    """Background processes that ended since the last request, as a new fragment (never edited in)."""
    if notes := background.take_exit_notes():
        state.record(user(BACKGROUND_EXITS.wrap("\n".join(notes))))

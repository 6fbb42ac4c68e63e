"""One turn's events as Codex notifications: ``item/started`` -> deltas -> ``item/completed`` per
item, ``turn/plan/updated``, ``turn/diff/updated``, ``thread/tokenUsage/updated``,
``thread/compacted``, ``warning`` and ``error``.

:class:`TurnItems` keeps what the turn has shown so far (its items, open or done, the plan, the
diff, the last token count), so a client that attaches mid-turn gets the same picture at once
(:meth:`TurnItems.snapshot`) and the live notifications after it. Fed with a replayed history
and no ``send``, it builds a stored turn's items (history.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import items
from agent_cli.event_handlers import ByEventType

Send = Callable[[str, dict[str, Any]], None]
OUTPUT_KEPT = 64 * 1024  # of a running command's output, for the snapshot of a client that attaches
handlers: ByEventType[Callable[[TurnItems, Any], None]] = ByEventType()


def now_ms() -> int:
    return int(time.time() * 1000)


class TurnItems:
    def __init__(self, thread_id: str, turn_id: str, cwd: str, send: Send | None = None) -> None:
        self.thread_id, self.turn_id, self.cwd = thread_id, turn_id, cwd
        self._send = send
        self.items: dict[str, dict[str, Any]] = {}  # in the order they started
        self.open: dict[str, str] = {}  # item id -> the streamed text so far (message, reasoning, output)
        self._counter = 0
        self._message: str | None = None  # the agent message being streamed
        self._reasoning: str | None = None
        self._tools: dict[str, str] = {}  # call id -> item id
        self.declined: set[str] = set()  # call ids the user said no to
        self.plan: dict[str, Any] | None = None
        self.diffs: dict[str, str] = {}  # path -> its latest diff in this turn
        self.tokens: dict[str, Any] | None = None
        self.last_message: str | None = None
        self.error: str | None = None

    # --- the events ---------------------------------------------------------------------

    def feed(self, event: ev.Event) -> None:
        if (handler := handlers.get(event)) is not None:
            handler(self, event)

    def item_of_call(self, call_id: str) -> str | None:
        return self._tools.get(call_id)

    @handlers(ev.UserMessage)
    def _user(self, event: ev.UserMessage) -> None:
        item_id = self._new_id()
        self._start(items.user_message(item_id, event.typed or event.text, event.images))
        self._complete(item_id)

    @handlers(ev.TextDelta)
    def _text(self, event: ev.TextDelta) -> None:
        if self._message is None:
            self._message = self._new_id()
            self._start(items.agent_message(self._message, ""))
        self.open[self._message] += event.text
        self._notify("item/agentMessage/delta", itemId=self._message, delta=event.text)

    @handlers(ev.AgentMessage, ev.Refusal)
    def _answer(self, event: ev.AgentMessage) -> None:
        item_id, self._message = self._message, None
        if item_id is None:
            item_id = self._new_id()
            self._start(items.agent_message(item_id, ""))
        self.items[item_id]["text"] = event.text
        self.last_message = event.text
        self._complete(item_id)

    @handlers(ev.ReasoningDelta)
    def _thinking(self, event: ev.ReasoningDelta) -> None:
        if self._reasoning is None:
            self._reasoning = self._new_id()
            self._start(items.reasoning(self._reasoning, ""))
        self.open[self._reasoning] += event.text
        self._notify("item/reasoning/summaryTextDelta", itemId=self._reasoning, delta=event.text, summaryIndex=0)

    @handlers(ev.ReasoningDone)
    def _thought(self, event: ev.ReasoningDone) -> None:
        item_id, self._reasoning = self._reasoning, None
        if item_id is None:
            item_id = self._new_id()
            self._start(items.reasoning(item_id, ""))
        self.items[item_id].update(items.reasoning(item_id, event.text))
        self._complete(item_id)

    @handlers(ev.ToolCallBegin)
    def _tool_begin(self, event: ev.ToolCallBegin) -> None:
        if event.name == items.PLAN:
            return
        item_id = self._tools[event.call_id] = self._new_id()
        self._start(items.tool_started(item_id, event.name, event.arguments, self.cwd))

    @handlers(ev.ToolOutputDelta)
    def _output(self, event: ev.ToolOutputDelta) -> None:
        item_id = self._tools.get(event.call_id)
        if item_id is None or item_id not in self.open or self.items[item_id]["type"] != "commandExecution":
            return
        self.open[item_id] = (self.open[item_id] + event.text)[-OUTPUT_KEPT:]
        self._notify("item/commandExecution/outputDelta", itemId=item_id, delta=event.text)

    @handlers(ev.ToolCallEnd)
    def _tool_end(self, event: ev.ToolCallEnd) -> None:
        item_id = self._tools.get(event.call_id)
        if item_id is None or item_id not in self.open:
            return
        streamed = self.open[item_id]
        self.items[item_id] = items.tool_completed(self.items[item_id], event, streamed, event.call_id in self.declined)
        self._complete(item_id)
        if event.changes and event.success:
            self.diffs.update({change.path: change.diff for change in event.changes})
            self._notify("turn/diff/updated", diff="\n".join(self.diffs.values()))

    @handlers(ev.WebSearch)
    def _search(self, event: ev.WebSearch) -> None:
        item_id = self._new_id()
        self._start(items.web_search(item_id, event.query))
        self._complete(item_id)

    @handlers(ev.PlanUpdated)
    def _plan(self, event: ev.PlanUpdated) -> None:
        self.plan = {"explanation": event.explanation, "plan": items.plan_steps(event.plan)}
        self._notify("turn/plan/updated", **self.plan)

    @handlers(ev.TokenCount)
    def _tokens(self, event: ev.TokenCount) -> None:
        self.tokens = {
            "total": items.usage_breakdown(event.total),
            "last": items.usage_breakdown(event.last),
            "modelContextWindow": event.context_window,
        }
        self._notify("thread/tokenUsage/updated", tokenUsage=self.tokens)

    @handlers(ev.CompactionStarted)
    def _compacting(self, event: ev.CompactionStarted) -> None:
        self._start(items.compaction(self._new_id()))

    @handlers(ev.CompactionFinished)
    def _compacted(self, event: ev.CompactionFinished) -> None:
        item_id = next((i for i in self.open if self.items[i]["type"] == "contextCompaction"), None)
        if item_id is None:
            item_id = self._new_id()
            self._start(items.compaction(item_id))
        self._complete(item_id)
        if event.applied:
            self._notify("thread/compacted")

    @handlers(ev.Notice)
    def _notice(self, event: ev.Notice) -> None:
        """Command output (/model, /context...): shown as a message of its own."""
        item_id = self._new_id()
        text = f"**{event.title}**\n\n{event.text}" if event.title else event.text
        self._start(items.agent_message(item_id, text))
        self._complete(item_id)

    @handlers(ev.Warning)
    def _warning(self, event: ev.Warning) -> None:
        self._send_plain("warning", {"threadId": self.thread_id, "message": event.message})

    @handlers(ev.Error)
    def _error(self, event: ev.Error) -> None:
        if not event.fatal:
            self._send_plain("warning", {"threadId": self.thread_id, "message": event.message})
            return
        self.error = event.message
        self._notify("error", error={"message": event.message}, willRetry=False)

    @handlers(ev.Retry)
    def _retry(self, event: ev.Retry) -> None:
        message = f"{event.reason} (retry {event.attempt}/{event.max_attempts} in {event.delay:.1f}s)"
        self._notify("error", error={"message": message}, willRetry=True)

    @handlers(ev.InputRejected)
    def _rejected(self, event: ev.InputRejected) -> None:
        self.error = event.message
        self._notify("error", error={"message": event.message}, willRetry=False)

    @handlers(ev.TurnFailed)
    def _failed(self, event: ev.TurnFailed) -> None:
        if self.error is None:
            self.error = event.message
            self._notify("error", error={"message": event.message}, willRetry=False)

    @handlers(ev.CommandAction)
    def _action(self, event: ev.CommandAction) -> None:
        message = f"/{event.action} belongs to agent-cli's own terminal UI; it does nothing here"
        self._send_plain("warning", {"threadId": self.thread_id, "message": message})

    def enter_review(self, target: str) -> None:
        item_id = self._new_id()
        self._start(items.review_mode(item_id, True, target))
        self._complete(item_id)

    def exit_review(self) -> None:
        item_id = self._new_id()
        self._start(items.review_mode(item_id, False, self.last_message or ""))
        self._complete(item_id)

    # --- the turn's picture --------------------------------------------------------------

    def close_open(self) -> None:
        """At the turn's end: every item still open completes, as it stands."""
        for item_id in list(self.open):
            item = self.items[item_id]
            if item["type"] == "agentMessage":
                item["text"] = self.open[item_id]
            elif item["type"] == "reasoning":
                item.update(items.reasoning(item_id, self.open[item_id]))
            self.items[item_id] = items.interrupted(item)
            self._complete(item_id)
        self._message = self._reasoning = None

    def snapshot(self) -> list[tuple[str, dict[str, Any]]]:
        """What a client attaching now needs to see the turn as the others do."""
        shown: list[tuple[str, dict[str, Any]]] = []
        for item_id, item in self.items.items():
            start = dict(item)
            streamed = self.open.get(item_id)
            if item_id in self.open and item["type"] == "agentMessage":
                start["text"] = ""
            shown.append(("item/started", self._params(item=start, startedAtMs=now_ms())))
            if item_id not in self.open:
                shown.append(("item/completed", self._params(item=item, completedAtMs=now_ms())))
            elif streamed:
                method = {
                    "agentMessage": "item/agentMessage/delta",
                    "commandExecution": "item/commandExecution/outputDelta",
                }.get(item["type"])
                if method is not None:
                    shown.append((method, self._params(itemId=item_id, delta=streamed)))
        if self.plan is not None:
            shown.append(("turn/plan/updated", self._params(**self.plan)))
        if self.diffs:
            shown.append(("turn/diff/updated", self._params(diff="\n".join(self.diffs.values()))))
        if self.tokens is not None:
            shown.append(("thread/tokenUsage/updated", self._params(tokenUsage=self.tokens)))
        return shown

    def completed_items(self) -> list[dict[str, Any]]:
        return [item for item_id, item in self.items.items() if item_id not in self.open]

    # --- sending -------------------------------------------------------------------------

    def _new_id(self) -> str:
        self._counter += 1
        return f"{self.turn_id}-{self._counter}"

    def _start(self, item: dict[str, Any]) -> None:
        self.items[item["id"]] = item
        self.open[item["id"]] = ""
        self._send_plain("item/started", self._params(item=item, startedAtMs=now_ms()))

    def _complete(self, item_id: str) -> None:
        self.open.pop(item_id, None)
        self._send_plain("item/completed", self._params(item=self.items[item_id], completedAtMs=now_ms()))

    def _params(self, **fields: Any) -> dict[str, Any]:
        return {"threadId": self.thread_id, "turnId": self.turn_id, **fields}

    def _notify(self, method: str, **fields: Any) -> None:
        self._send_plain(method, self._params(**fields))

    def _send_plain(self, method: str, params: dict[str, Any]) -> None:
        if self._send is not None:
            self._send(method, params)

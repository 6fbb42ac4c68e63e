"""Questions a turn asks its clients (approvals, MCP elicitations) as server-to-client requests.

A question goes to every client subscribed to the thread, and to each one that subscribes while
it waits (a client that left mid-turn and another that attaches later). The first answer wins;
every client that got the question then hears ``serverRequest/resolved`` with its own request id.
A client that leaves without answering changes nothing: the question waits for the next one.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.app_server import rpc
from agent_cli.app_server.connection import Connection, ConnectionClosed

log = logging.getLogger("agent_cli.app_server")
_keys = itertools.count(1)


@dataclass(eq=False)
class Question:
    method: str
    params: dict[str, Any]
    answered: Callable[[Any | None], None]  # with the client's result; None when the turn ended first
    key: int = field(default_factory=lambda: next(_keys))
    sent: dict[Connection, rpc.RequestId] = field(default_factory=dict)
    done: bool = False


class Questions:
    """The questions one thread has open."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.open: dict[int, Question] = {}

    def ask(
        self, method: str, params: dict[str, Any], answered: Callable[[Any | None], None], to: set[Connection]
    ) -> Question:
        question = Question(method, params, answered)
        self.open[question.key] = question
        for connection in list(to):
            self.send(question, connection)
        return question

    def show_to(self, connection: Connection) -> None:
        """A client that just subscribed gets every question still open."""
        for question in list(self.open.values()):
            if connection not in question.sent:
                self.send(question, connection)

    def send(self, question: Question, connection: Connection) -> None:
        request_id, future = connection.ask(question.method, question.params)
        question.sent[connection] = request_id
        future.add_done_callback(lambda done: self._reply(question, connection, done))

    def _reply(self, question: Question, connection: Connection, future: asyncio.Future[Any]) -> None:
        if question.done or future.cancelled():
            return
        error = future.exception()
        if isinstance(error, ConnectionClosed):
            question.sent.pop(connection, None)  # gone without answering: the question waits on
            return
        if error is not None:  # the client answered with an error: taken as a no, never as a yes
            log.warning("%r answered %s with an error: %s", connection, question.method, error)
            self.resolve(question, None)
            return
        self.resolve(question, future.result())

    def resolve(self, question: Question, result: Any | None) -> None:
        if question.done:
            return
        question.done = True
        self.open.pop(question.key, None)
        question.answered(result)
        for connection, request_id in question.sent.items():
            connection.notify("serverRequest/resolved", {"threadId": self.thread_id, "requestId": request_id})

    def clear(self) -> None:
        """The turn ended: questions still open are withdrawn."""
        for question in list(self.open.values()):
            self.resolve(question, None)

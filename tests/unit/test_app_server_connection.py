"""One connection of `agent app-server` (agent_cli/app_server/connection.py) on an in-memory
carrier: saturated ingress answered -32001 "Server overloaded; retry later." while the rest goes
on, an answer to our own request resolving its future (and a client that leaves failing it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from agent_cli.app_server import rpc
from agent_cli.app_server.connection import MAX_IN_FLIGHT, Connection, ConnectionClosed


class Carrier:
    """What the client sends arrives through ``incoming``; what the server sends lands in ``sent``."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.sent: list[dict] = []
        self.arrived = asyncio.Event()

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.arrived.set()

    async def close(self, reason: str) -> None:
        pass

    async def incoming(self) -> AsyncIterator[str]:
        while (text := await self.inbox.get()) is not None:
            yield text

    async def answered(self, count: int) -> list[dict]:
        while len([m for m in self.sent if "method" not in m]) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)
        return [m for m in self.sent if "method" not in m]


class SlowHandler:
    """Answers ``wait`` once ``release`` is set, anything else at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    def opened(self, connection: Connection) -> None:
        pass

    async def request(self, connection: Connection, request: rpc.Request) -> dict:
        if request.method == "wait":
            await self.release.wait()
        return {"method": request.method}

    async def notified(self, connection: Connection, notification: rpc.Notification) -> None:
        pass

    def closed(self, connection: Connection) -> None:
        pass


async def test_a_saturated_connection_answers_overloaded_and_serves_again_once_drained():
    carrier, handler = Carrier(), SlowHandler()
    connection = Connection(carrier, handler)
    served = asyncio.create_task(connection.run(carrier.incoming()))
    for n in range(MAX_IN_FLIGHT + 3):
        carrier.inbox.put_nowait(rpc.encode(rpc.request(n, "wait", {})))
    answers = await carrier.answered(3)
    assert [(a["id"], a["error"]) for a in answers] == [
        (n, {"code": -32001, "message": "Server overloaded; retry later."})
        for n in range(MAX_IN_FLIGHT, MAX_IN_FLIGHT + 3)
    ]
    handler.release.set()
    answers = await carrier.answered(MAX_IN_FLIGHT + 3)
    carrier.inbox.put_nowait(rpc.encode(rpc.request("after", "quick", {})))
    answers = await carrier.answered(MAX_IN_FLIGHT + 4)
    assert answers[-1] == {"id": "after", "result": {"method": "quick"}}
    carrier.inbox.put_nowait(None)
    await served


async def test_json_nested_past_the_parsers_depth_is_a_parse_error_and_the_connection_goes_on():
    """``[[[[…`` 200,000 deep made json.loads raise RecursionError: the connection ended (over
    stdio, the server with it, and the turns it ran)."""
    carrier, handler = Carrier(), SlowHandler()
    served = asyncio.create_task(Connection(carrier, handler).run(carrier.incoming()))
    carrier.inbox.put_nowait("[" * 200_000 + "]" * 200_000)
    carrier.inbox.put_nowait(rpc.encode(rpc.request(1, "quick", {})))
    answers = await carrier.answered(2)
    assert answers[0] == {"id": None, "error": {"code": -32700, "message": "Parse error: nested too deeply"}}
    assert answers[1] == {"id": 1, "result": {"method": "quick"}}
    carrier.inbox.put_nowait(None)
    await served


async def test_an_answer_resolves_our_request_and_a_client_that_leaves_fails_the_others():
    carrier = Carrier()
    connection = Connection(carrier, SlowHandler())
    served = asyncio.create_task(connection.run(carrier.incoming()))
    await asyncio.sleep(0)
    first_id, first = connection.ask("item/commandExecution/requestApproval", {"itemId": "a"})
    _, second = connection.ask("item/commandExecution/requestApproval", {"itemId": "b"})
    carrier.inbox.put_nowait(rpc.encode(rpc.result_reply(first_id, {"decision": "accept"})))
    assert await asyncio.wait_for(first, 10) == {"decision": "accept"}
    carrier.inbox.put_nowait(None)  # the client leaves without answering the second
    await served
    assert isinstance(second.exception(), ConnectionClosed)

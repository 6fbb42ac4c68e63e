"""The session's model clients: the current model's, made on first use, and those a switch retired.

A client a parent lends its child (``borrowed``) is used here and closed by the parent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from agent_cli.models.base import ModelClient

ClientFactory = Callable[[str], ModelClient]  # a model's name -> a new client for it


class ModelClients:
    def __init__(self, factory: ClientFactory, model: str, first: ModelClient | None = None, borrowed: bool = False):
        self.factory = factory  # another model's client (a prompt hook's, a subagent's): its user closes it
        self._model = model
        self._client = first
        self._borrowed = first if borrowed else None
        self._retired: list[ModelClient] = []  # replaced by switch(); closed with the session

    def current(self) -> ModelClient:
        """The current model's client, made on first use (and again after a switch)."""
        if self._client is None:
            self._client = self.factory(self._model)
        return self._client

    def switch(self, model: str) -> None:
        """Use ``model``'s client from the next request on; the current one is closed with the session
        (while the event loop still runs, not when it is collected)."""
        self._model = model
        if self._client is not None:
            self._retired.append(self._client)
        self._client = None

    def made(self) -> list[ModelClient]:
        """Every client in use or retired, borrowed or not."""
        return [client for client in (self._client, *self._retired) if client is not None]

    async def aclose(self) -> None:
        clients, self._client, self._retired = [*self._retired, self._client], None, []
        for client in clients:
            if client is not None and client is not self._borrowed:
                with contextlib.suppress(Exception):  # closing is best effort
                    await client.aclose()

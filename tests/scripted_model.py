"""A model in the test's own process, answering from a script (beside tests/fake_server).

The fake server is real HTTP through the real SDKs, for what the wire does. A test of the loop
itself (what the turn does with an answer, a tool call, a cut-off response, an error) needs no
server: :class:`ScriptedModel` is a ``ModelClient`` that answers each request with the next reply
of its script and keeps every prompt it was sent, as mini-swe-agent's ``DeterministicModel`` does.
A reply is the text of an answer, a :class:`~agent_cli.items.ToolCall`, a list of items, a
:class:`Reply` (items with a stop reason), an exception (raised), or a function of the prompt
returning one of those.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_cli.config import load_config
from agent_cli.items import Item, Message, assistant, item_to_dict
from agent_cli.models import base as stream
from agent_cli.models.base import STOP_END, Prompt, Usage
from agent_cli.runtime import open_session
from agent_cli.session import Session


@dataclass(frozen=True)
class Reply:
    items: list[Item] = field(default_factory=list)
    stop_reason: str = STOP_END
    usage: Usage | None = None  # default: about a token per 4 bytes of the prompt


class ScriptedModel:
    provider = "scripted"
    api_key = base_url = quirks = None  # the ModelClient protocol's; nothing to connect to
    url = "http://scripted.invalid"

    def __init__(self, *script: Any, model: str = "test-model"):
        self.model = model
        self.script = list(script)
        self.prompts: list[Prompt] = []

    async def aclose(self) -> None:
        pass

    async def stream(self, prompt: Prompt) -> AsyncIterator[stream.StreamEvent]:
        self.prompts.append(prompt)
        if not self.script:
            raise AssertionError(f"the script has no reply for request {len(self.prompts)}")
        reply = self.script.pop(0)
        if callable(reply) and not isinstance(reply, type):
            reply = reply(prompt)
        if isinstance(reply, BaseException):
            raise reply
        reply = as_reply(reply)
        for item in reply.items:
            if isinstance(item, Message):
                yield stream.TextDelta(item.text)
            yield stream.OutputItem(item)
        yield stream.Completed(reply.usage or estimated_usage(prompt), stop_reason=reply.stop_reason)


def as_reply(reply: Any) -> Reply:
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, str):
        return Reply([assistant(reply)])
    if isinstance(reply, list):
        return Reply(reply)
    return Reply([reply])


def estimated_usage(prompt: Prompt) -> Usage:
    size = len(prompt.instructions) + len(json.dumps([item_to_dict(item) for item in prompt.items]))
    return Usage(input_tokens=size // 4 + 1, output_tokens=10)


def scripted_session(
    repo: Path, model: ScriptedModel, *overrides: str, interactive: bool = False, trust: bool = True
) -> Session:
    """A session in ``repo`` whose every request ``model`` answers; ``overrides``: `-c` settings;
    ``trust``: the repository's own settings apply (as ``agent exec --trust``)."""
    config = load_config(repo, ['model_provider="openai-chat"', f'model="{model.model}"', *overrides])
    clients: Callable[[str], ScriptedModel] = lambda name: model  # noqa: E731 - one model, whatever is asked
    return open_session(replace(config, trust_repository=trust), interactive=interactive, clients=clients)

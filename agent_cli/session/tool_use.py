"""Noticing a model that never calls tools, on an OpenAI-compatible server.

Some models (or servers without a tool-call parser) accept tool definitions but only ever answer
in text, often writing out the commands they would have run. After a few such turns the user is
told once, with the model's name and models that do call tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_cli import events as ev
from agent_cli.models.chat_quirks import TOOL_MODELS_HINT

TURNS_BEFORE_NOTICE = 3
# An answer that shows commands to run, or a call spelled out as JSON, is one a tool would have done.
_WANTS_TO_ACT = re.compile(
    r"```(?:bash|sh|shell|console|zsh)\b|^\s*\$ \S|\"(?:name|function)\"\s*:\s*\"[\w.-]+\"",
    re.MULTILINE | re.IGNORECASE,
)
NEVER_CALLS_TOOLS = (
    "{model} has not called a tool in {turns} turns, but answers with commands for you to run: it "
    "probably does not support tool calls, or the server does not parse them (vLLM needs "
    "--enable-auto-tool-choice --tool-call-parser, llama.cpp --jinja). Use a model that calls tools "
    "(for example {hint}) to let the agent read, run and edit for you."
)


class ToolUseWatch:
    """One model's tool use in a session (a model switch starts the watch over)."""

    def __init__(self, model: str, wire_api: str) -> None:
        self.watching = wire_api == "chat"  # other servers parse tool calls themselves
        self.switch(model)

    def switch(self, model: str) -> None:
        """Watch ``model`` from now on, afresh (a model switch)."""
        self.model = model
        self.calls = 0
        self.quiet_turns = 0  # turns that offered tools and ended without any call
        self.wanted_to_act = False
        self.noticed = False

    def called(self) -> None:
        self.calls += 1

    def turn_ended(self, answer: str | None, offered_tools: bool, emit: Callable[[ev.Event], None]) -> None:
        """``offered_tools``: the turn's requests carried tool definitions."""
        if self.noticed or self.calls or not self.watching or not offered_tools:
            return
        self.quiet_turns += 1
        self.wanted_to_act = self.wanted_to_act or bool(answer and _WANTS_TO_ACT.search(answer))
        if self.quiet_turns >= TURNS_BEFORE_NOTICE and self.wanted_to_act:
            self.noticed = True
            text = NEVER_CALLS_TOOLS.format(model=self.model, turns=self.quiet_turns, hint=TOOL_MODELS_HINT)
            emit(ev.Warning(text))

"""What a request sends besides the conversation: the system prompt, the tool list and the door.

A turn computes the :class:`RequestParts` of each request once, as frozen values
(``SessionState.request_parts``), and everything about that request uses them: the prompt, its
fixed token cost (:meth:`RequestParts.overhead`), the door its tool calls go through.
:class:`RequestShape`, the session's part that computes them, keeps the system prompt it built so
every request's prefix stays byte-identical; only a compaction has it built again.

Which tools: those the mode allows, within a command's tool limit. In the lean profile (a small
window, context/profile.py) four are offered directly with terse descriptions and the rest stand
behind the door's ``tool_search`` face; otherwise the registry's listed tools are offered and
its unlisted ones (MCP tools past their budget) stand behind the ``mcp_search`` face. The door's
two tools come last; none is offered when nothing stands behind it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_cli.config import Config
from agent_cli.context.initial import build_instructions
from agent_cli.context.modes import tools_for_mode
from agent_cli.context.profile import behind_search, is_lean, lean_spec, offered_directly
from agent_cli.context.prompts import prompt_library
from agent_cli.context.tokens import TokenCounter
from agent_cli.models.base import ToolSpec
from agent_cli.tools import door_faces
from agent_cli.tools.base import Tool
from agent_cli.tools.door import Door, Face
from agent_cli.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class RequestParts:
    """One request's fixed parts, as sent."""

    instructions: str  # the system prompt
    tools: tuple[ToolSpec, ...]  # the tool list; the door's two tools last, when there is a door
    web_search: str  # the provider's own search: off, cached, live
    lean: bool  # the lean profile (context/profile.py)
    door: Door | None  # what the model finds by search, and routes its calls through

    def overhead(self, counter: TokenCounter) -> int:
        """Tokens of the system prompt and the tool definitions (the counter keeps the last count)."""
        return counter.prompt_overhead(self.instructions, list(self.tools))


def tool_allowed(tools: ToolRegistry, name: str, mode: str, limit: frozenset[str] | None) -> bool:
    """Whether ``mode`` allows the tool ``name``, within a command's tool ``limit`` (None: no limit)."""
    return bool(tools_for_mode(mode, [name], tools.is_read_only)) and (limit is None or name in limit)


class RequestShape:
    """The session's system prompt and tool list, for a mode, a tool limit and a window."""

    def __init__(self, config: Config, tools: ToolRegistry, interactive: Callable[[], bool], given: str | None = None):
        self._config = config
        self._tools = tools
        self._interactive = interactive  # the front end can ask the user (web search is then on)
        self._given = given  # a subagent's own system prompt: kept through compactions
        self._front_end: str | None = None  # a front end's whole system prompt (use_instructions)
        self._built: str | None = given
        self._built_lean = False  # the profile the cached system prompt was built for

    def use_instructions(self, text: str) -> None:
        """A front end's own system prompt for every request (the Claude Agent SDK's
        ``--system-prompt``); the lean profile no longer applies."""
        self._front_end = text

    def rebuild(self) -> None:
        """Build the system prompt again for the next request (after a compaction: the prefix
        changes anyway, and a mid-session /mode switch was only a note, which compaction drops)."""
        self._built = None

    def lean(self, window: int) -> bool:
        """The lean profile: a small ``window``, or `context_profile = "lean"`; not with a system
        prompt of a subagent's or a front end's own."""
        return self._given is None and self._front_end is None and is_lean(self._config.context_profile, window)

    def instructions(self, mode: str, lean: bool) -> str:
        """The system prompt, built once (for ``mode``) so every request's prefix stays byte-identical."""
        if self._front_end is not None:
            return self._front_end
        if self._built is None or self._built_lean != lean:  # a learned window may change the profile
            self._built_lean = lean
            config = self._config
            self._built = self._given or build_instructions(mode, config.agent_home, memory=config.memory, lean=lean)
        return self._built

    def web_search(self, lean: bool, limit: frozenset[str] | None) -> str:
        """The provider's own web search (``web_search``): unset means cached where the user can be
        asked, off in exec; off for a turn with fewer tools that leaves it out (/review), and in the
        lean profile unless configured (results would not fit)."""
        if limit is not None and "web_search" not in limit:
            return "off"
        return self._config.web_search or ("cached" if self._interactive() and not lean else "off")

    def parts(self, mode: str, limit: frozenset[str] | None, window: int) -> RequestParts:
        """A request's fixed parts for ``mode``, a tool ``limit`` and the ``window`` planned with."""
        lean = self.lean(window)
        registry = self._tools
        allowed = set(tools_for_mode(mode, registry.names, registry.is_read_only))
        usable = [tool for tool in registry.tools if tool.name in allowed and (limit is None or tool.name in limit)]
        if lean:
            library = prompt_library(self._config.agent_home)
            offered = [
                lean_spec(tool.spec, library) for tool in usable if tool.listed and offered_directly(tool.name, mode)
            ]
            door = door_of(door_faces.LEAN, [tool for tool in usable if behind_search(tool.name, mode)])
        else:
            offered = [tool.spec for tool in usable if tool.listed]
            door = door_of(door_faces.MCP, [tool for tool in usable if not tool.listed])
        tools = (*offered, *door.specs) if door is not None else tuple(offered)
        return RequestParts(self.instructions(mode, lean), tools, self.web_search(lean, limit), lean, door)


def door_of(face: Face, behind: list[Tool]) -> Door | None:
    return Door(face, tuple(behind)) if behind else None

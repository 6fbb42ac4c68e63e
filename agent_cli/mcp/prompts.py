"""MCP prompts as slash commands (``/mcp__<server>__<prompt> [args]``) and resources as ``@server:uri``.

Arguments are positional in the declared order, or ``name=value``; a missing required argument
is a usage line. The prompt's messages become the user's turn. A resource mention attaches the
resource's text (or a note for binary content), capped like an attached file.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from agent_cli.mcp.results import content_text, resource_contents_text
from agent_cli.tools.mcp_names import PREFIX, SEPARATOR, safe_part

if TYPE_CHECKING:
    from agent_cli.mcp.manager import McpManager

_NAMED = re.compile(r"^([A-Za-z_][\w-]*)=(.*)$", re.DOTALL)


class PromptUsageError(ValueError):
    """Arguments that do not fit the prompt; the message is a usage line."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    required: bool
    description: str = ""


@dataclass(frozen=True, slots=True)
class McpPrompt:
    command: str  # without the slash: mcp__server__prompt
    server: str
    name: str  # the server's own name for it
    description: str
    arguments: tuple[PromptArgument, ...]

    @property
    def argument_hint(self) -> str:
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)

    def usage(self) -> str:
        return f"usage: /{self.command} {self.argument_hint}".rstrip()


def prompt_commands(manager: McpManager) -> list[McpPrompt]:
    """Every prompt of the ready servers, as commands."""
    commands: dict[str, McpPrompt] = {}
    for connection in manager.ready():
        for prompt in connection.prompts:
            name = f"{PREFIX}{safe_part(connection.spec.name)}{SEPARATOR}{safe_part(prompt.name)}"
            arguments = tuple(
                PromptArgument(arg.name, bool(arg.required), arg.description or "") for arg in prompt.arguments or []
            )
            description = (prompt.description or prompt.title or f"MCP prompt from {connection.spec.name}").strip()
            commands.setdefault(
                name, McpPrompt(name, connection.spec.name, prompt.name, description.splitlines()[0], arguments)
            )
    return list(commands.values())


def parse_arguments(prompt: McpPrompt, text: str) -> dict[str, str]:
    """``a b`` (in declared order) or ``name=value`` words; raises PromptUsageError."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise PromptUsageError(f"/{prompt.command}: {exc}; {prompt.usage()}") from None
    names = [argument.name for argument in prompt.arguments]
    values: dict[str, str] = {}
    positional = iter(names)
    for word in words:
        match = _NAMED.match(word)
        if match and match.group(1) in names:
            values[match.group(1)] = match.group(2)
            continue
        name = next((n for n in positional if n not in values), None)
        if name is None:
            raise PromptUsageError(f"/{prompt.command}: too many arguments; {prompt.usage()}")
        values[name] = word
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        raise PromptUsageError(f"/{prompt.command}: missing {', '.join(missing)}; {prompt.usage()}")
    return values


def prompt_text(result: Any) -> str:
    """A ``GetPromptResult``'s messages as one user turn (assistant messages marked as such)."""
    parts = []
    for message in result.messages:
        text = content_text(message.content)
        parts.append(text if message.role == "user" else f"[assistant]\n{text}")
    return "\n\n".join(parts).strip()


def resource_mentions(manager: McpManager) -> list[str]:
    """``server:uri`` for every listed resource, for completion after ``@``."""
    return [f"{c.spec.name}:{resource.uri}" for c in manager.ready() for resource in c.resources]


async def resource_block(manager: McpManager, token: str, max_bytes: int) -> str | None:
    """The attachment for ``@server:uri``; None when ``server`` is no MCP server (then it is a path)."""
    server, sep, uri = token.partition(":")
    if not sep or not uri or server not in manager.connections:
        return None
    result = await manager.read_resource(server, uri)  # raises McpCallError
    text = "\n".join(resource_contents_text(contents) for contents in result.contents)
    data = text.encode("utf-8")
    if len(data) > max_bytes:
        cut = data[:max_bytes].decode("utf-8", "ignore")
        text = f"{cut}\n[… truncated: {len(data):,} bytes in all, {max_bytes:,} attached …]"
    return f"<mcp_resource server={quoteattr(server)} uri={quoteattr(uri)}>\n{text}\n</mcp_resource>"

"""Claude Code's tool and model names and ours, so its command, agent and plugin files work unchanged."""

from __future__ import annotations

# Claude Code tool name (lower-cased) -> our tool.
CLAUDE_TO_OURS = {
    "bash": "shell",
    "read": "read_file",
    "grep": "grep",
    "glob": "grep",
    "ls": "list_dir",
    "edit": "apply_patch",
    "multiedit": "apply_patch",
    "write": "apply_patch",
    "todowrite": "update_plan",
    "bashoutput": "shell_output",
    "killshell": "shell_kill",
    "killbash": "shell_kill",
    "webfetch": "web_fetch",
    "websearch": "web_search",
}


def our_tool_name(claude_name: str) -> str | None:
    """Our tool for a Claude Code name (any case), or None when there is no equivalent."""
    return CLAUDE_TO_OURS.get(claude_name.strip().lower())


# Claude Code's model aliases, on the Anthropic provider; elsewhere they mean `inherit`.
CLAUDE_ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-5", "haiku": "claude-haiku-4-5"}


def resolve_model(model: str, current: str, wire_api: str) -> str:
    """The model a file's ``model:`` asks for: ``inherit`` (or nothing) is ``current``; Claude's
    aliases only mean something on Anthropic's API."""
    model = model.strip()
    if model.lower() in ("", "inherit"):
        return current
    if model.lower() in CLAUDE_ALIASES:
        return CLAUDE_ALIASES[model.lower()] if wire_api == "anthropic" else current
    return model

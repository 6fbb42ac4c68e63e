"""One permission rule (Claude Code's syntax) and what it matches.

``Tool`` matches every use of the tool; ``Tool(specifier)`` narrows it:

- ``Bash(npm run lint)`` the exact command; ``Bash(npm test:*)`` (legacy) and ``Bash(npm test *)``
  the command and anything after it at a word boundary; ``*`` elsewhere matches any text.
- ``Read(path)`` / ``Edit(path)`` (``Write``, ``MultiEdit`` too): gitignore-style patterns.
  ``//abs/path`` is absolute, ``~/path`` under the home folder, ``/path`` and ``./path`` relative
  to the folder of the rule's file (the project for ``.claude/`` and ``.agent/``), a bare
  ``name`` matches at any depth below it, as in ``.gitignore``.
- ``WebFetch(domain:example.com)`` (``*.example.com`` for subdomains).
- ``mcp__server`` every tool of a server; ``mcp__server__tool`` one tool (``*`` allowed).

Our own tool names work too (``shell(git status)``, ``read_file(./.env)``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = ("allow", "ask", "deny")
# Our tool name -> Claude Code's, so a rule may use either.
OURS_TO_CLAUDE = {
    "shell": "Bash",
    "read_file": "Read",
    "apply_patch": "Edit",
    "grep": "Grep",
    "list_dir": "LS",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "update_plan": "TodoWrite",
    "task": "Task",
}
CLAUDE_NAMES = {name.lower(): name for name in (*OURS_TO_CLAUDE.values(), "Write", "MultiEdit", "Glob", "NotebookEdit")}
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})  # a Read(path) rule covers all of them
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_RULE = re.compile(r"^\s*([A-Za-z0-9_\-*.]+)\s*(?:\((.*)\))?\s*$", re.S)


class RuleError(ValueError):
    """A rule that cannot be read; the message says why."""


def canonical_tool(name: str) -> str:
    """Claude Code's spelling of a tool name (ours or Claude's, any case); MCP names unchanged."""
    if name.startswith("mcp__"):
        return name
    return OURS_TO_CLAUDE.get(name, CLAUDE_NAMES.get(name.lower(), name))


@dataclass(frozen=True, slots=True)
class Target:
    """One thing a tool call does that rules judge: run a command, read or edit a path, fetch a domain."""

    tool: str  # Claude Code's name of the tool making the call (Bash, Read, Grep, WebFetch, mcp__s__t)
    kind: str  # "command" | "read" | "edit" | "domain" | "call"
    value: str = ""  # the command text, the absolute path, the host
    head: str | None = None  # a command whose later words are expansions: its literal leading words
    # Other spellings of what runs (`/usr/bin/curl x` and `timeout 5 curl x` run `curl x`; `bash -c 'curl x'`
    # too): deny and ask rules match them as well, allow rules only ``value``.
    also: tuple[Target, ...] = ()


@dataclass(frozen=True)
class Rule:
    kind: str  # allow | ask | deny
    text: str  # as written
    tool: str  # Claude Code's name
    specifier: str | None
    source: str  # where it was written (a file, or "-c")
    base: Path  # what relative paths are relative to
    rank: int = 0  # the source's place in the order: a later source wins between ask and allow
    repository: bool = False  # from the repository's own files (allow applies only once trusted)

    def __str__(self) -> str:
        return self.text

    # --- matching --------------------------------------------------------------------------

    def matches(self, target: Target) -> bool:
        tool = self.tool
        if tool.startswith("mcp__"):
            return target.tool.startswith("mcp__") and _mcp_matches(tool, target.tool)
        if target.kind == "call":
            return tool == target.tool and self.specifier is None
        if target.kind == "read":
            if tool != "Read" and tool != target.tool:
                return False
        elif target.kind == "edit":
            if tool not in EDIT_TOOLS:
                return False
        elif tool != target.tool:
            return False
        if self.specifier is None:
            return True
        if target.kind == "command":
            return _command_matches(self.specifier, target)
        if target.kind in ("read", "edit"):
            return path_matches(self.specifier, self.base, target.value)
        if target.kind == "domain":
            return _domain_matches(self.specifier, target.value)
        return False


def parse_rule(text: str, kind: str, source: str, base: Path, rank: int = 0, repository: bool = False) -> Rule:
    if not isinstance(text, str) or not (match := _RULE.match(text)):
        raise RuleError(f"{text!r} is not a rule (expected Tool or Tool(specifier))")
    name, specifier = match.group(1), match.group(2)
    if specifier is not None:
        specifier = specifier.strip()
        if specifier in ("", "*"):
            specifier = None  # Bash(*) is Bash
    tool = canonical_tool(name)
    if tool == "WebFetch" and specifier is not None and not specifier.startswith("domain:"):
        raise RuleError(f"{text!r}: WebFetch rules name a domain: WebFetch(domain:example.com)")
    return Rule(kind, text.strip(), tool, specifier, source, base, rank, repository)


def _mcp_matches(rule_tool: str, tool: str) -> bool:
    if "*" in rule_tool:
        return fnmatch.fnmatchcase(tool, rule_tool)
    return tool == rule_tool or tool.startswith(rule_tool + "__")


@functools.lru_cache(maxsize=512)
def _command_regex(specifier: str) -> re.Pattern[str]:
    if specifier.endswith(":*"):  # legacy prefix form
        return re.compile(re.escape(specifier[:-2]) + r"(?:\s.*)?", re.S)
    trailing = specifier.endswith(" *")
    body = specifier[:-2] if trailing else specifier
    pattern = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(pattern + (r"(?:\s.*)?" if trailing else ""), re.S)


def is_prefix_rule(specifier: str) -> bool:
    return specifier.endswith((":*", " *"))


def _command_matches(specifier: str, target: Target) -> bool:
    if target.head is None:
        return _command_regex(specifier).fullmatch(target.value) is not None
    # Later words are unknown until the shell expands them: only a prefix inside the literal head
    # can match, so `Bash(rm:*)` covers `rm $f` but `Bash(rm a)` does not.
    if not is_prefix_rule(specifier):
        return False
    prefix = specifier[:-2]
    return "*" not in prefix and (target.head == prefix or target.head.startswith(prefix + " "))


def _domain_matches(specifier: str, host: str) -> bool:
    domain = specifier.removeprefix("domain:").strip().lower()
    return fnmatch.fnmatchcase(host.lower(), domain)


@functools.lru_cache(maxsize=512)
def _spec(pattern: str):
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def path_matches(specifier: str, base: Path, path: str) -> bool:
    """A gitignore-style path specifier of a rule against an absolute path."""
    if specifier.startswith("//"):
        base, pattern = Path("/"), specifier[1:]
    elif specifier.startswith("~/"):
        base, pattern = Path.home(), specifier[1:]
    elif specifier.startswith("./"):
        pattern = specifier[1:]
    else:
        pattern = specifier  # "/x" anchored at base, "x" at any depth, as in .gitignore
    try:
        relative = Path(path).relative_to(base)
    except ValueError:
        return False
    text = relative.as_posix()
    if text == ".":
        return False
    return _spec(pattern).match_file(text)

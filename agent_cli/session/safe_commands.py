"""Which shell commands only read, and what "approve for this session" remembers of a command.

Conservative on purpose: anything this module cannot read with confidence (substitutions,
redirections, newlines, unknown programs, flags that write or execute) is not "known safe".
"""

from __future__ import annotations

import re
import shlex
from typing import Any
from urllib.parse import urlsplit

from agent_cli.permissions.rules import canonical_tool
from agent_cli.permissions.shell_parse import parse_command_line
from agent_cli.permissions.vocabulary import RUNNER_SUBCOMMANDS, SHELLS
from agent_cli.permissions.vocabulary import WRAPPERS as RUNS_ITS_ARGUMENTS

SAFE_COMMANDS = frozenset(
    {
        "basename",
        "cat",
        "cd",
        "cut",
        "df",
        "dirname",
        "du",
        "echo",
        "false",
        "file",
        "grep",
        "head",
        "ls",
        "nl",
        "pwd",
        "readlink",
        "realpath",
        "stat",
        "tail",
        "tr",
        "true",
        "wc",
        "which",
        "whoami",
    }
)
SAFE_GIT = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "blame"})
SAFE_GIT_BRANCH_FLAGS = frozenset({"-a", "-r", "-v", "-vv", "--all", "--remotes", "--list", "--show-current"})
UNSAFE_FIND_FLAGS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
UNSAFE_RG_FLAGS = ("--pre", "--pre-glob", "-z", "--search-zip")
SED_PRINT = re.compile(r"^\d+(,\d+)?p$")
CONTROL = frozenset({"|", "&&", "||", ";"})
UNREADABLE = ("\n", "\r", "`", "$(", "<(", ">(")
# Programs that run other programs: remembering their first word would approve anything.
WRAPPERS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "dash",
        "fish",
        "env",
        "sudo",
        "doas",
        "xargs",
        "eval",
        "exec",
        "nohup",
        "timeout",
        "nice",
        "time",
        "command",
        "builtin",
        "watch",
        "ssh",
    }
)


def _runs_a_command(words: list[str] | tuple[str, ...]) -> bool:
    """Whether the first word runs a command given by the later ones (`ssh-agent rm x`, `npm exec
    rm`): approving its prefix would approve any command."""
    head = words[0].rsplit("/", 1)[-1]
    if head in WRAPPERS or head in RUNS_ITS_ARGUMENTS or head in SHELLS:
        return True
    return bool(RUNNER_SUBCOMMANDS.get(head, frozenset()) & set(words[1:]))


TWO_WORD_HEADS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "uv", "pip", "python", "python3", "make", "go", "docker", "kubectl"}
)


def split_commands(command: str) -> list[list[str]] | None:
    """``a | b && c`` as [[a], [b], [c]]; None when the line holds anything else shell-special."""
    if any(mark in command for mark in UNREADABLE):
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    # shlex ends a word at `#` and drops the rest of the line; bash starts a comment only at a
    # word's start (`echo x#; rm -rf ~` runs rm). Seeing `#` as text reads a comment as commands:
    # never less than bash runs.
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in CONTROL:
            segments.append([])
        elif token and all(ch in "();<>|&" for ch in token):
            return None  # redirection, background job or subshell
        else:
            segments[-1].append(token)
    return segments if all(segments) else None


def _is_safe_words(words: list[str]) -> bool:
    head, rest = words[0], words[1:]
    if head == "git":
        if not rest or any(w.startswith(("--output", "--ext-diff", "-o")) for w in rest[1:]):
            return False
        if rest[0] == "branch":
            return all(w in SAFE_GIT_BRANCH_FLAGS for w in rest[1:])
        return rest[0] in SAFE_GIT
    if head == "find":
        return not any(w in UNSAFE_FIND_FLAGS for w in rest)
    if head == "rg":
        return not any(w.split("=", 1)[0] in UNSAFE_RG_FLAGS for w in rest)
    if head == "sed":  # only `sed -n 12,40p FILE`: sed scripts can write (w) and execute (e)
        return len(rest) >= 2 and rest[0] == "-n" and bool(SED_PRINT.match(rest[1]))
    if head in ("sort", "tree"):
        return not any(w.startswith(("-o", "--output", "--compress-program")) for w in rest)
    if head == "uniq":  # a second file argument is an output file
        return len([w for w in rest if not w.startswith("-")]) <= 1
    return head in SAFE_COMMANDS


def is_known_safe(command: str) -> bool:
    """True when every command of the line only reads (pipes, && and ; allowed)."""
    segments = split_commands(command)
    return bool(segments) and all(_is_safe_words(words) for words in segments)  # type: ignore[union-attr]


def command_prefix(command: str) -> str:
    """What approving ``command`` for the session covers: its first word(s) for a plain command,
    the exact text for anything chained, redirected or run through a wrapper."""
    segments = split_commands(command)
    if not segments or len(segments) != 1:
        return "=" + command.strip()
    words = segments[0]
    if _runs_a_command(words) or "-c" in words[1:3] or "-e" in words[1:3] or "=" in words[0]:
        return "=" + command.strip()
    return " ".join(words[:2] if words[0] in TWO_WORD_HEADS else words[:1])


def approval_key(tool: str, args: dict[str, Any]) -> str:
    """What "approve for this session" remembers: the tool, and for shell the command prefix."""
    if tool != "shell":
        return tool
    return "shell:" + command_prefix(str(args.get("command", "")))


def suggest_rule(tool: str, args: dict[str, Any]) -> str | None:
    """The rule "don't ask again" would save: ``Bash(npm test:*)`` for a command (its first words),
    the tool's name otherwise. None when no rule can cover the call safely (a compound line)."""
    name = canonical_tool(tool)
    if name == "WebFetch":
        try:
            host = urlsplit(str(args.get("url", ""))).hostname
        except ValueError:
            host = None
        return f"WebFetch(domain:{host})" if host else None
    if name != "Bash":
        return name if tool != "apply_patch" else "Edit"
    line = parse_command_line(str(args.get("command", "")))
    if not line.readable or len(line.commands) != 1 or line.writes or not line.commands[0].literal:
        return None
    words = line.commands[0].words
    if _runs_a_command(words) or "=" in words[0]:
        return f"Bash({' '.join(words)})"
    count = 2 if words[0] in TWO_WORD_HEADS and len(words) > 1 and not words[1].startswith("-") else 1
    return f"Bash({' '.join(words[:count])}:*)"

"""A shell command line as the simple commands it runs and the files it writes to.

Parsed with tree-sitter-bash (a real grammar, not regular expressions): pipelines, ``&&``/``||``/
``;`` lists, subshells, ``{ }`` groups, command and process substitution, loops and conditionals
all reduce to the simple commands inside them. Anything the parser cannot read with confidence
(a syntax error, a word built from an expansion) makes the line "unreadable", and no allow rule
then approves it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Nodes whose text is one literal word once quotes are removed.
_LITERAL = frozenset({"word", "number"})
_STRING = frozenset({"raw_string", "string", "ansi_c_string"})
# Redirections to these are not writes anyone needs approving.
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# `>&word` writes to a file too, unless the word is a descriptor (`>&2`) or `-` (close).
WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    words: tuple[str, ...]  # the program and its arguments, quotes removed
    text: str  # as written, for messages
    literal: bool = True  # False: a word holds an expansion ($VAR, $(...)) whose value is unknown
    # Where its standard input comes from: "" the tool's (closed), "pipe", "text" (a here-doc or
    # here-string, in ``stdin_text``), "file" (``< path``, the path in ``stdin_text``), "unknown".
    stdin: str = ""
    stdin_text: str = ""
    assigns: tuple[tuple[str, str | None], ...] = ()  # FOO=1 cmd: (name, value or None when expanded)


@dataclass(frozen=True, slots=True)
class ParsedLine:
    commands: tuple[SimpleCommand, ...]
    writes: tuple[str, ...]  # files written by redirections (``> out.txt``, ``>> log``)
    readable: bool  # False: a syntax error, or a redirection target that is not a plain word
    assigns: tuple[tuple[str, str | None], ...] = ()  # every variable the line sets (FOO=1, export FOO=1)
    aliases: tuple[tuple[str, str | None], ...] = ()  # `alias name=value` on the line (value None: expanded)
    functions: tuple[tuple[str, str], ...] = ()  # `name() { body; }` on the line: (name, body)


@functools.cache
def _parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _word(node) -> str | None:
    """The literal value of a word node; None when it depends on an expansion."""
    kind = node.type
    if kind in _LITERAL:
        text = _text(node)
        return None if "$" in text or "`" in text else text.replace("\\", "")
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(_text(node)[2:-1])
    if kind == "string":
        if any(child.type not in ('"', "string_content") for child in node.children):
            return None
        return "".join(_text(child) for child in node.children if child.type == "string_content")
    if kind == "concatenation":
        parts = [_word(child) for child in node.children]
        return None if any(part is None for part in parts) else "".join(parts)  # type: ignore[arg-type]
    return None


_ANSI_C = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))", re.S)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _ansi_c(body: str) -> str:
    """The value of bash's ``$'...'`` quoting: ``$'\\x63url'`` is ``curl``."""

    def one(match: re.Match[str]) -> str:
        hex2, hex4, hex8, octal, control, other = match.groups()
        if hex2 or hex4 or hex8 or octal:
            code = int(hex2 or hex4 or hex8, 16) if not octal else int(octal, 8)
            return chr(code) if code <= 0x10FFFF else ""
        if control is not None:
            return chr(ord(control) & 0x1F)
        return _ANSI_C_SIMPLE.get(other, other)

    return _ANSI_C.sub(one, body)


def _stdin_of(redirect) -> tuple[str, str] | None:
    """What a redirection feeds to standard input, or None when it is not an input redirection."""
    if redirect.type == "herestring_redirect":
        value = next((_word(child) for child in redirect.children if child.type != "<<<"), None)
        return ("text", value) if value is not None else ("unknown", "")
    if redirect.type == "heredoc_redirect":
        body = next((child for child in redirect.children if child.type == "heredoc_body"), None)
        return ("text", _text(body) if body is not None else "")
    if redirect.type == "file_redirect":
        operators = {_text(c) for c in redirect.children if not c.is_named}
        if "<" in operators:
            destination = redirect.child_by_field_name("destination")
            target = _word(destination) if destination is not None else None
            return ("file", target) if target is not None else ("unknown", "")
        if operators & {"<&", "<>", "<&-"}:
            return ("unknown", "")  # `<&3`: whatever descriptor 3 holds
    return None


def _assignment(node) -> tuple[str, str | None]:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    return (_text(name) if name is not None else "", _word(value) if value is not None else "")


def parse_command_line(line: str) -> ParsedLine:
    # bash removes a backslash-newline before it splits words (`cu\<newline>rl` runs curl);
    # the grammar would split the word there instead.
    line = line.replace("\\\n", "")
    tree = _parser().parse(line.encode("utf-8"))
    commands: list[SimpleCommand] = []
    writes: list[str] = []
    assigns: list[tuple[str, str | None]] = []
    aliases: list[tuple[str, str | None]] = []
    functions: list[tuple[str, str]] = []
    readable = not tree.root_node.has_error

    def visit(node, stdin: tuple[str, str]) -> None:
        nonlocal readable
        if node.type == "variable_assignment":
            assigns.append(_assignment(node))
        if node.type == "function_definition":
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is not None and body is not None:
                functions.append((_text(name), _text(body)))
        if node.type == "redirected_statement":
            for child in node.children:
                if child is not node.child_by_field_name("body"):
                    stdin = _stdin_of(child) or stdin
        if node.type == "command":
            words: list[str] = []
            prefix: list[tuple[str, str | None]] = []
            literal = True
            for child in node.children:
                if child.type == "variable_assignment":
                    prefix.append(_assignment(child))
                    continue  # FOO=1 cmd: the command is cmd
                if (
                    child.type == "command_name"
                    or child.type in _LITERAL
                    or child.type in _STRING
                    or child.type == "concatenation"
                ):
                    target = child.children[0] if child.type == "command_name" and child.children else child
                    value = _word(target)
                    if value is None:
                        literal = False
                        value = _text(target)
                    words.append(value)
                elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                    stdin = _stdin_of(child) or stdin
                else:
                    literal = False  # $VAR, $(...) as an argument
                    words.append(_text(child))
            if words:
                commands.append(SimpleCommand(tuple(words), _text(node), literal, stdin[0], stdin[1], tuple(prefix)))
                if words[0] == "alias":
                    for word in words[1:]:
                        if "=" in word:
                            name, value = word.split("=", 1)
                            aliases.append((name, value if literal else None))
        if node.type == "file_redirect":
            operator = next(
                (_text(c) for c in node.children if c.type in WRITE_OPERATORS or _text(c) in WRITE_OPERATORS), None
            )
            destination = node.child_by_field_name("destination")
            if operator is not None and destination is not None:
                target = _word(destination)
                if target is None:
                    readable = False  # > "$OUT": where it writes is unknown
                elif target not in HARMLESS_TARGETS and not target.isdigit() and target != "-":
                    writes.append(target)
        if node.type == "process_substitution" and _text(node).startswith(">("):
            stdin = ("pipe", "")  # `tee >(sh)`: what runs inside reads what the outer command writes
        piped = node.type == "pipeline" or (node.type == "heredoc_redirect")
        first = True
        for child in node.children:
            # A pipeline's later commands read the pipe (in `cat <<EOF | sh` the grammar puts the
            # pipeline inside the here-doc's node).
            visit(child, ("pipe", "") if piped and not first and child.is_named else stdin)
            if child.is_named and node.type == "pipeline":
                first = False
            if node.type == "heredoc_redirect":
                first = False

    visit(tree.root_node, ("", ""))
    return ParsedLine(tuple(commands), tuple(writes), readable, tuple(assigns), tuple(aliases), tuple(functions))

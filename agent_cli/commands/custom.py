"""Custom command files: markdown prompts the user runs as ``/name``.

Two roots, the repository's first: ``<repo>/.agent/commands`` (repo = git root, else cwd) and
``$AGENT_HOME/commands``. ``git/commit.md`` becomes ``/git:commit``. A file may start with YAML
front matter (``description``, ``argument-hint``, ``model``, ``allowed-tools``); a file whose front
matter is broken is skipped with a warning, never fatal.

Body placeholders are substituted in one pass: ``$ARGUMENTS`` (everything typed after the name),
``$1``…``$9`` (shell-style words), ``$$`` (a literal ``$``). A body with no argument placeholder
gets the typed arguments appended. Substituted values are marked as such so that expansion never
treats them as part of the command file (see :mod:`agent_cli.commands.expand`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from agent_cli.commands.text import Piece, Template
from agent_cli.context.project_doc import repository_root
from agent_cli.tools.claude_names import our_tool_name

COMMANDS_DIR = Path(".agent") / "commands"
NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_SIMPLE_LINE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")
# `$10` is not `$1` followed by 0: a placeholder never continues into a digit or a letter.
_PLACEHOLDER = re.compile(r"\$(?:(ARGUMENTS)(?!\w)|([1-9])(?!\d)|(\$))")
_TEXT_KEYS = ("description", "argument-hint", "model")


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str  # without the slash: "git:commit"
    path: Path
    body: str
    source: str  # "repo" or "user"
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CustomCommandSet:
    commands: dict[str, CustomCommand]
    warnings: tuple[str, ...]


def command_roots(cwd: Path, agent_home: Path) -> list[tuple[str, Path]]:
    """Where command files live, highest precedence first."""
    project = repository_root(cwd)
    repo = [("repo", project / COMMANDS_DIR)] if project else []
    return [*repo, ("user", Path(agent_home) / "commands")]


def load_custom_commands(
    cwd: Path, agent_home: Path, hidden: Callable[[Path], object] | None = None
) -> CustomCommandSet:
    """Every valid command file under the roots; on a name clash the repository's wins. A file that
    a Read deny rule hides (``hidden`` names the rule), or a repository's that links outside the
    repository, is skipped: its text would reach the model."""
    commands: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for source, root in command_roots(cwd, agent_home):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            if not path.is_file():
                continue
            name = command_name(path.relative_to(root))
            if name is None:
                warnings.append(
                    f"command file {path}: its path does not make a command name "
                    "(use letters, digits, '_', '-' and '.'); skipped"
                )
                continue
            if problem := _off_limits(path, root.parent.parent if source == "repo" else None, hidden):
                warnings.append(f"command file {path}: {problem}; skipped")
                continue
            command, problem = parse_command_file(path, name, source)
            if command is None:
                warnings.append(f"command file {path}: {problem}; skipped")
                continue
            commands.setdefault(name, command)  # the repository's root came first
    return CustomCommandSet(commands, tuple(warnings))


def _off_limits(path: Path, repository: Path | None, hidden: Callable[[Path], object] | None) -> str:
    real = path.resolve()
    if repository is not None and not real.is_relative_to(repository.resolve()):
        return f"it leads outside the repository (to {real})"
    if hidden is not None and (rule := hidden(path.absolute()) or hidden(real)):
        return f"the permission rule `{rule}` hides it"
    return ""


def command_name(relative: Path) -> str | None:
    """``git/commit.md`` -> ``git:commit``; None when a part is not a usable name."""
    parts = [*relative.parent.parts, relative.stem]
    if not all(NAME_PART.match(part) for part in parts):
        return None
    return ":".join(parts)


def parse_command_file(path: Path, name: str, source: str) -> tuple[CustomCommand | None, str]:
    """(command, "") or (None, why the file cannot be used)."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError as exc:
        return None, f"cannot read ({exc.strerror or exc})"
    meta: dict[str, object] = {}
    body = text
    if text.startswith("---"):
        match = _FRONT_MATTER.match(text)
        if match is None:
            return None, "front matter is not closed (it must end with a '---' line)"
        meta, problem = parse_front_matter(match.group(1))
        if problem:
            return None, problem
        body = text[match.end() :]
    for key in _TEXT_KEYS:
        value = meta.get(key)
        if value is not None and not isinstance(value, (str, int, float, list)):
            return None, f"front matter `{key}` must be text"
    tools, problem = _tool_list(meta.get("allowed-tools"))
    if problem:
        return None, problem
    model = meta.get("model")
    return CustomCommand(
        name=name,
        path=path,
        body=body.strip("\n"),
        source=source,
        description=_one_line(meta.get("description")),
        argument_hint=_one_line(meta.get("argument-hint")),
        model=str(model).strip() or None if model is not None else None,
        allowed_tools=tools,
    ), ""


def parse_front_matter(block: str) -> tuple[dict[str, object], str]:
    """YAML front matter; lines like ``argument-hint: [a] [b]`` that YAML rejects are read as text."""
    try:
        meta = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        simple = _simple_pairs(block)
        if simple is None:
            return {}, f"invalid YAML front matter: {' '.join(str(exc).split())}"
        return simple, ""
    if meta is None:
        return {}, ""
    if not isinstance(meta, dict):
        return {}, "front matter must be a mapping of keys to values"
    return {str(key): value for key, value in meta.items()}, ""


def _simple_pairs(block: str) -> dict[str, object] | None:
    pairs: dict[str, object] = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _SIMPLE_LINE.match(line)
        if match is None:
            return None
        pairs[match.group(1)] = match.group(2).strip("'\"")
    return pairs


def _one_line(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):  # `argument-hint: [message]` is a YAML list
        return " ".join(f"[{item}]" for item in value)
    return " ".join(str(value).split())


def _tool_list(value: object) -> tuple[tuple[str, ...], str]:
    if value is None:
        return (), ""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip()), ""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip()), ""
    return (), "front matter `allowed-tools` must be a comma-separated string or a list of names"


def split_arguments(arguments: str) -> list[str]:
    """Shell-style words; unbalanced quotes fall back to splitting on whitespace."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def uses_arguments(body: str) -> bool:
    return any(match.group(1) or match.group(2) for match in _PLACEHOLDER.finditer(body))


def substitute(body: str, arguments: str) -> Template:
    """The body with placeholders replaced, once. Values are marked so nothing expands them as
    part of the command file; a body without placeholders gets the arguments appended."""
    arguments = arguments.strip()
    words = split_arguments(arguments)
    pieces: list[Piece] = []
    position = 0
    for match in _PLACEHOLDER.finditer(body):
        pieces.append(Piece(body[position : match.start()], "template"))
        if match.group(1):
            pieces.append(Piece(arguments, "argument"))
        elif match.group(2):
            index = int(match.group(2)) - 1
            pieces.append(Piece(words[index] if index < len(words) else "", "argument"))
        else:
            pieces.append(Piece("$", "argument"))  # a literal dollar; never starts a token
        position = match.end()
    pieces.append(Piece(body[position:], "template"))
    if arguments and not uses_arguments(body):
        pieces.append(Piece("\n\n", "template"))
        pieces.append(Piece(arguments, "argument"))
    return Template(tuple(piece for piece in pieces if piece.text))


def allowed_tool_names(allowed: tuple[str, ...], known: list[str]) -> tuple[list[str], list[str]]:
    """(our tool names for an ``allowed-tools`` list, the entries that name no tool).

    ``Bash(git add:*)``-style patterns allow the whole tool: the approval policy still applies."""
    names: list[str] = []
    unknown: list[str] = []
    for entry in allowed:
        base = entry.split("(", 1)[0].strip()
        name = base if base in known else (our_tool_name(base) or "")
        if name in known:
            names.append(name)
        else:
            unknown.append(entry)
    return list(dict.fromkeys(names)), unknown

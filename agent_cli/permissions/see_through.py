"""Every other form under which a simple command runs a command, for deny and ask rules.

``timeout 5 rm x``, ``bash -o pipefail -c 'rm x'``, ``bash <<EOF``, ``trap 'rm x' EXIT``,
``git -C . push`` and ``git -c alias.p='!rm x' p`` all run a command that a rule names; this module
finds it. What it cannot see through (inline code for an interpreter, a shell reading a pipe, an
``eval`` of a value known only when it runs, a program it cannot resolve) it reports as *opaque*,
with the reason: the engine then asks (and ``agent exec`` refuses) while a Bash deny or ask rule is
in force. docs/safety.md lists exactly what is seen through and what is not.

It runs on every shell call while any rule exists; only while a Bash deny or ask rule exists does
it touch the disk (``resolve``): it stats the programs the line names and reads the shell scripts
the line runs (regular files only), nothing else.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.permissions.code_files import code_files
from agent_cli.permissions.programs import AWKS, awk, exact_command_start, git, interpreter, option_values, sed
from agent_cli.permissions.rules import Target
from agent_cli.permissions.runners import parallel_without_command, socat, subcommand_start
from agent_cli.permissions.shell_parse import ParsedLine, parse_command_line
from agent_cli.permissions.vocabulary import (
    APPENDING,
    COMMAND_OPTIONS,
    COMMAND_VARIABLES,
    OPAQUE_VARIABLES,
    SHELL_STARTERS,
    SHELLS,
    STRING_WRAPPERS,
    WRAPPERS,
)

_DEPTH = 8
_BUDGET = 2000  # spellings for one line (scripts included); past it the line is opaque
_SCRIPT_BYTES = 64 * 1024  # parsing costs about 5 ms per KiB
_STDIN_PATHS = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})

# A glob or a brace expansion in a program's name: the shell picks the program (`/bin/r?`).
_PATTERN = re.compile(r"[*?]|\[.*\]|\{.*(,|\.\.).*\}")
# Folders whose programs are the system's: a binary elsewhere may be a renamed copy of anything.
_SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/opt/", "/nix/store/", "/snap/", "/etc/")


@dataclass
class Walk:
    """One shell line's walk: what it found, and why it could not see through something."""

    cwd: Path
    resolve: bool  # stat programs and read scripts (only while Bash deny/ask rules exist)
    line_writes: frozenset[str] = frozenset()
    aliases: dict[str, str | None] = field(default_factory=dict)
    functions: dict[str, str] = field(default_factory=dict)  # name -> body, defined on the line
    found: list[Target] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set)
    in_script: int = 0  # walking the text of a script file the line runs

    def unknown(self, words: tuple[str, ...] | str, why: str, always: bool = False) -> None:
        if self.in_script and not always:
            return  # a script's own unknowns are not counted (see _script); a walk cut short is
        text = words if isinstance(words, str) else shlex.join(words)
        if len(text) > 80:
            text = text[:77] + "…"
        self.opaque.append(f"`{text}` {why}")

    def spell(self, words: tuple[str, ...], literal: bool, depth: int) -> None:
        spell(self, words, literal, depth)

    def written(self, path: str) -> bool:
        """Whether the line itself writes ``path`` (by a redirection) before it may run it."""
        return absolute(self.cwd, path) in self.line_writes

    def target(self, words: tuple[str, ...], literal: bool) -> None:
        self.found.append(command_target(words, literal))

    def line(
        self, text: str, depth: int, strict: bool = True, appended: bool = False, stdin: tuple[str, str] = ("", "")
    ) -> None:
        """The commands of a shell string that something runs (`bash -c TEXT`, `eval TEXT`); those
        that do not redirect their input read ``stdin``, the input of what runs the string."""
        parsed = parse_command_line(text)
        if strict and not parsed.readable:
            self.unknown(text, "is shell code the parser cannot read")
        self.aliases.update(parsed.aliases)
        self.functions.update(parsed.functions)
        walk_line(self, parsed, depth + 1, appended, stdin)


def command_target(words: tuple[str, ...], literal: bool) -> Target:
    head = None
    if not literal:
        leading = []
        for word in words:
            if "$" in word or "`" in word or "<(" in word or ">(" in word:
                break
            leading.append(word)
        head = " ".join(leading)
    return Target("Bash", "command", " ".join(words), head)


def absolute(cwd: Path, path: object) -> str:
    text = str(path or ".")
    # Resolved whether written absolute or relative: `/repo/link` (-> .env) and `/repo/src/../.env`
    # are the file a `Read(./.env)` deny rule hides.
    return str((cwd / Path(text).expanduser()).resolve())


def walk_line(
    walk: Walk, parsed: ParsedLine, depth: int, appended: bool = False, stdin: tuple[str, str] = ("", "")
) -> None:
    for name, value in parsed.assigns:
        variable(walk, name, value, depth)
    for simple in parsed.commands:
        if len(walk.found) > _BUDGET:
            walk.unknown(simple.words, "comes after more commands than the rules follow", always=True)
            break
        walk.target(simple.words, simple.literal)
        kind, text = (simple.stdin, simple.stdin_text) if simple.stdin else stdin
        spell(walk, simple.words, simple.literal, depth, kind, text, appended)
    walk.found += [Target("Bash", "edit", absolute(walk.cwd, path)) for path in parsed.writes]


def variable(walk: Walk, name: str, value: str | None, depth: int) -> None:
    if name in OPAQUE_VARIABLES or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_")):
        walk.unknown(f"{name}=…", "changes which programs run or what they load")
    elif name in COMMAND_VARIABLES:
        if value is None:
            walk.unknown(f"{name}=…", "names a command known only when it runs")
        elif value:
            walk.line(value, depth, strict=False)


def spell(
    walk: Walk,
    words: tuple[str, ...],
    literal: bool,
    depth: int,
    stdin: str = "",
    stdin_text: str = "",
    appended: bool = False,
) -> None:
    """Add every other spelling of the command ``words`` to the walk, flattened."""
    if not words:
        return
    key = (words, literal, stdin, stdin_text, appended)
    if key in walk.seen:
        return
    walk.seen.add(key)
    if depth > _DEPTH or len(walk.found) > _BUDGET:
        walk.unknown(words, "nests too many commands to follow", always=True)
        return
    program = words[0]
    base = program.rsplit("/", 1)[-1]
    args = words[1:]
    if not literal and (program == "" or "$" in program or "`" in program or program.startswith(("<(", ">("))):
        walk.unknown(words, "runs a program known only when it runs")
        return
    if base != program:
        walk.target((base, *args), literal)
    if program in walk.aliases:
        value = walk.aliases.pop(program)  # an alias is not expanded inside itself
        if value is None:
            walk.unknown(words, "runs an alias whose value is known only when it runs")
        else:
            walk.line(" ".join((value, *args)), depth, stdin=(stdin, stdin_text))
        walk.aliases[program] = value
    if stdin and program in walk.functions:  # `f <<< 'rm x'`: the body reads it
        walk.line(walk.functions.pop(program), depth, stdin=(stdin, stdin_text))
    if program not in ("[", "[[") and _PATTERN.search(program):
        walk.unknown(words, "runs a program named by a pattern the shell expands")
    if walk.resolve:
        _resolve(walk, words, literal, depth)
    if base in SHELLS:
        _shell(walk, words, depth, stdin, stdin_text, appended)
    elif base in ("enable", "hash") and any(a.startswith("-") and ("f" in a or "p" in a) for a in args):
        walk.unknown(words, "makes a name run a program the rules cannot see (enable -f, hash -p)")
    elif base in ("eval", "trap", "source", "."):
        _builtin(walk, words, literal, depth, (stdin, stdin_text))
    elif base in WRAPPERS or base.startswith("ld-linux"):
        _wrapper(walk, words, literal, depth, (stdin, stdin_text))
    elif base == "find":
        _find(walk, words, literal, depth, (stdin, stdin_text))
    elif base == "git":
        git(walk, words, literal, depth)
    elif base in AWKS:
        awk(walk, words)
    elif base == "sed":
        sed(walk, words)
    elif base in COMMAND_OPTIONS:
        for value in option_values(args, COMMAND_OPTIONS[base]):
            # what runs reads the program's data (an archive member, a socket), never the tool's input
            walk.line(value.removeprefix("exec="), depth, strict=False, stdin=("pipe", ""))
    elif base == "socat":
        socat(walk, words, depth)
    elif base == "ssh":
        for value in option_values(args, ("-o",)):
            key, _, command = value.partition("=")
            if key.strip().lower() in ("proxycommand", "localcommand", "knownhostscommand"):
                walk.line(command, depth, strict=False)
    else:
        if (start := subcommand_start(base, args)) is not None:
            _wrapper(walk, (base, *args[start:]), literal, depth, (stdin, stdin_text))
        interpreter(walk, words, stdin)
        code_files(walk, words, stdin, depth)


# --- programs ------------------------------------------------------------------------------------


def _resolve(walk: Walk, words: tuple[str, ...], literal: bool, depth: int) -> None:
    """A symlink's real program is another spelling; a renamed binary or a missing program is opaque."""
    program = words[0]
    if "/" not in program:
        found = shutil.which(program)
        if found is None:
            return  # a builtin, a function, or not installed: it runs nothing the line does not show
        real = os.path.realpath(found)
        if (name := os.path.basename(real)) != program:
            walk.target((name, *words[1:]), literal)
        if not real.startswith(_writable(walk)):
            return  # installed: only the user could have put it there
        program = found  # on PATH but in a folder commands may write (an activated .venv/bin)
    path = absolute(walk.cwd, program)
    if path in walk.line_writes or not os.path.exists(path):
        walk.unknown(words, "runs a program that does not exist yet, so which one is unknown")
        return
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        return
    if not stat.S_ISREG(mode):  # never opened: a FIFO would block
        walk.unknown(words, "runs a program that is not a regular file")
        return
    name = os.path.basename(path)
    if name != program.rsplit("/", 1)[-1]:
        walk.target((name, *words[1:]), literal)  # a symlink: the program it points to
    if path.startswith(_SYSTEM):
        return
    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        walk.unknown(words, "runs a program that cannot be read")
        return
    if head.startswith(b"#!"):
        interpreter = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if interpreter and interpreter[0].rsplit("/", 1)[-1] == "env":
            interpreter = [word for word in interpreter[1:] if not word.startswith("-")]
        if interpreter and interpreter[0].rsplit("/", 1)[-1] in SHELLS:
            _script(walk, program, depth)
    elif head.startswith(b"\x7fELF") or b"\0" in head:
        walk.unknown(words, "runs a binary outside the system's folders: it may be a renamed copy of any program")
    else:
        _script(walk, program, depth)  # no `#!`: the shell runs it as a shell script


def _writable(walk: Walk) -> tuple[str, ...]:
    """Folders a sandboxed command may write to, as prefixes."""
    return tuple(str(folder).rstrip("/") + "/" for folder in (walk.cwd, tempfile.gettempdir(), "/tmp", "/var/tmp"))


def _script(walk: Walk, path: str, depth: int) -> None:
    """A shell script the line runs: its commands, when it can be read before the line runs.

    What the script runs is judged by deny and ask rules, but what the rules cannot see through
    inside it is not counted: a script is a file like a Python one (`python3 tool.py` is not
    judged either), and real scripts run `"$@"` and `$JAVACMD` all the time. The line itself
    still fails closed: a script the same line writes, a FIFO or a device is opaque."""
    if not walk.resolve:
        return
    full = absolute(walk.cwd, path)
    if full in walk.line_writes:
        walk.unknown(path, "is a script the same line writes")
        return
    try:
        # Only a regular file is read: /dev/stdin, a FIFO or a device would block or be consumed.
        info = os.stat(full)
        if not stat.S_ISREG(info.st_mode):
            walk.unknown(path, "is a script read from a device, a pipe or a descriptor")
            return
        if info.st_size > _SCRIPT_BYTES:
            return  # not judged, like a script of another interpreter
        with open(full, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        walk.unknown(path, "is a script that cannot be read before it runs")
        return
    walk.in_script += 1
    try:
        walk.line(text, depth)
    finally:
        walk.in_script -= 1


def _shell(walk: Walk, words: tuple[str, ...], depth: int, stdin: str, stdin_text: str, appended: bool) -> None:
    """`bash [options] -c STRING`, `bash SCRIPT`, or a shell reading its standard input."""
    args = words[1:]
    command, reads_stdin, index = False, False, 0
    while index < len(args):
        arg = args[index]
        if arg in ("--", "-"):
            index += 1
            break
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            if name == "--command":  # fish, zsh
                command_text = value if equals else (args[index + 1] if index + 1 < len(args) else "")
                walk.line(command_text, depth, stdin=(stdin, stdin_text))
                return
            if name in ("--rcfile", "--init-file"):
                _script(walk, value if equals else (args[index + 1] if index + 1 < len(args) else ""), depth)
            index += 2 if name in ("--rcfile", "--init-file") and not equals else 1
            continue
        if arg[:1] in "-+" and len(arg) > 1:
            letters = arg[1:]
            command = command or (arg[0] == "-" and "c" in letters)
            reads_stdin = reads_stdin or (arg[0] == "-" and "s" in letters)
            index += 1 + letters.count("o") + letters.count("O")  # -o pipefail, -O extglob take a value
            continue
        break
    rest = args[index:]
    if command:
        if rest:
            walk.line(rest[0], depth, stdin=(stdin, stdin_text))
        else:
            walk.unknown(words, "is a shell whose command string comes from elsewhere")
        return
    if rest and rest[0] in _STDIN_PATHS:
        rest = ()  # `bash /dev/stdin <<EOF`: the same as reading standard input
    if rest and not reads_stdin:
        _script(walk, rest[0], depth)
        return
    if appended:
        walk.unknown(words, "is a shell given its script by its input")
    elif stdin == "text":
        walk.line(stdin_text, depth)
    elif stdin == "file":
        _script(walk, stdin_text, depth)
    elif stdin:
        walk.unknown(words, "is a shell reading commands from a pipe or a descriptor")


def _builtin(walk: Walk, words: tuple[str, ...], literal: bool, depth: int, stdin: tuple[str, str]) -> None:
    base, args = words[0], words[1:]
    if base == "eval":
        if not literal:
            walk.unknown(words, "evaluates a value known only when it runs")
        elif args:
            walk.line(" ".join(args), depth, stdin=stdin)
    elif base == "trap":
        if args and args[0] == "--":
            args = args[1:]
        if len(args) >= 2 and not args[0].startswith("-"):
            if "$" in args[0] or "`" in args[0]:
                walk.unknown(words, "sets a trap whose command is known only when it runs")
            else:
                walk.line(args[0], depth, stdin=stdin)
    elif args:  # source / .
        if not literal:
            walk.unknown(words, "reads a script known only when it runs")
        else:
            _script(walk, args[0], depth)


def _wrapper(walk: Walk, words: tuple[str, ...], literal: bool, depth: int, stdin: tuple[str, str]) -> None:
    base = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if base == "env" and any(re.match(r"-[^-]*S|--split-string", a) for a in args):
        walk.unknown(words, "splits a string into a command (env -S)")
        return
    appended = base in APPENDING
    if base == "parallel" and parallel_without_command(args):
        walk.unknown(words, "runs commands read from its input or a file")
        return
    # The wrapped command reads the wrapper's input, except under xargs and parallel (that is their
    # input); with none given, su, sudo, script… start a shell that reads it.
    passed = ("", "") if appended else stdin
    if stdin[0] and base in SHELL_STARTERS:
        _shell(walk, ("sh",), depth, *stdin, appended=False)
    exact = exact_command_start(base, args)
    if exact is not None:
        inner = args[exact:]
        if inner:
            walk.target(inner, literal)
            spell(walk, inner, literal, depth + 1, *passed, appended=appended)
        if appended and any("{}" in arg for arg in args):
            walk.unknown(words, "builds a command from its input")
        return
    for index, arg in enumerate(args):
        if " " in arg and base not in STRING_WRAPPERS:
            continue  # a program is never named with a space: `-m "rm old"` is a value
        if arg.startswith("-") or ("=" in arg and base == "env"):
            if base in STRING_WRAPPERS and arg.startswith("--") and "=" in arg:
                walk.line(arg.split("=", 1)[1], depth, strict=False, stdin=passed)  # su --command=…
            continue
        inner = args[index:]
        walk.target(inner, literal)
        spell(walk, inner, literal, depth + 1, *passed, appended=appended)
        if base in STRING_WRAPPERS:
            walk.line(arg, depth, strict=False, stdin=passed)
            if len(inner) > 1:
                walk.line(" ".join(inner), depth, strict=False, stdin=passed)  # watch and parallel join their words
    if appended and any("{}" in arg for arg in args):
        walk.unknown(words, "builds a command from its input")


def _find(walk: Walk, words: tuple[str, ...], literal: bool, depth: int, stdin: tuple[str, str]) -> None:
    """The commands `find ... -exec CMD {} ;` runs (-execdir, -ok, -okdir too)."""
    current: list[str] | None = None
    commands = []
    for word in words[1:]:
        if current is None:
            current = [] if word in ("-exec", "-execdir", "-ok", "-okdir") else None
        elif word in (";", "+"):
            commands.append(tuple(current))
            current = None
        else:
            current.append(word)
    if current:
        commands.append(tuple(current))
    for command in commands:
        if command:
            walk.target(command, literal)
            spell(walk, command, literal, depth + 1, *stdin, appended=True)

"""What some programs run, for the rules: git (its global options, `-c` keys and aliases, the
subcommands that run commands) and interpreters given inline code (`python -c`, `awk`'s
`system()`, `sed`'s `e`). The walk itself is see_through.py's; these only report to it.
"""

from __future__ import annotations

import functools
import re
import subprocess
from typing import Protocol

from agent_cli.permissions.rules import Target


class Walker(Protocol):
    """What see_through.Walk offers the functions here."""

    found: list[Target]
    resolve: bool

    def unknown(self, words: tuple[str, ...] | str, why: str) -> None: ...

    def target(self, words: tuple[str, ...], literal: bool) -> None: ...

    def line(
        self, text: str, depth: int, strict: bool = True, appended: bool = False, stdin: tuple[str, str] = ("", "")
    ) -> None: ...

    def spell(self, words: tuple[str, ...], literal: bool, depth: int) -> None: ...

    def written(self, path: str) -> bool: ...


# Interpreters: the options whose value is inline code.
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*")
_INLINE_SHORT = {
    "python": "c", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "bun": "e", "php": "r", "lua": "e",
    "luajit": "e", "Rscript": "e", "R": "e", "julia": "e", "osascript": "e", "expect": "c", "guile": "c",
    "racket": "e", "tclsh": "", "vim": "cS", "vi": "cS", "nvim": "cS", "ex": "cS", "view": "cS", "gdb": "x",
    "pwsh": "c", "powershell": "c", "deno": "", "emacs": "", "make": "",
}  # fmt: skip
_INLINE_LONG = {
    "node": ("--eval", "--print"), "nodejs": ("--eval", "--print"), "bun": ("--eval", "--print"),
    "julia": ("--eval",), "gdb": ("--eval-command", "-ex", "-iex"), "emacs": ("--eval", "-eval"),
    "pwsh": ("-command", "-encodedcommand"), "powershell": ("-command", "-encodedcommand"),
    "make": ("--eval",), "vim": ("--cmd",), "nvim": ("--cmd",), "deno": ("eval",),
}  # fmt: skip
# Their short options that take a value: the rest of a cluster (`-Wonce`) or the next word is that value.
_VALUED_SHORT = {"python": "WXm", "perl": "IMmdDxlCi0V", "ruby": "IrECFKTWx", "node": "r", "nodejs": "r", "php": "cdfz"}
_STDIN_CODE = frozenset({"python", "perl", "ruby", "node", "nodejs", "bun", "php", "lua", "luajit", "Rscript", "julia"})
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "original-awk"})
# git: global options that take a value (as the next word or after `=`), and `-c` keys.
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"})
_GIT_OPAQUE_OPTIONS = frozenset({"--config-env", "--exec-path"})
# `-c` keys that are only data; a key naming a program is parsed; any other key is opaque.
_GIT_PLAIN_KEYS = re.compile(
    r"(user|author|committer|color|advice|i18n|column|log|format|status|init|safe|gc|maintenance|feature|"
    r"pull|push|fetch|rebase|merge|commit|tag|branch|blame|grep|diff|interactive|help|pretty|transfer|"
    r"submodule|http|checkout|clone|core|index|pack|versionsort|am|apply|mailinfo|notes|worktree)\.[^.]+"
)
_GIT_PLAIN_EXCEPT = frozenset(
    {
        "core.pager", "core.editor", "core.sshcommand", "core.askpass", "core.fsmonitor", "core.hookspath",
        "core.gitproxy", "core.attributesfile", "core.excludesfile", "diff.external", "merge.tool", "diff.tool",
        "commit.template", "gc.auto", "http.proxy", "core.worktree", "index.version",
    }
)  # fmt: skip
_GIT_PROGRAM_KEYS = re.compile(
    r"core\.(pager|editor|sshcommand|askpass|fsmonitor)|sequence\.editor|diff\.external|credential\.helper|"
    r"credential\..*\.helper|gpg\.(.*\.)?program|pager\..*|diff\..*\.(textconv|command)|merge\..*\.driver|"
    r"filter\..*\.(clean|smudge|process)|difftool\..*\.cmd|mergetool\..*\.cmd|uploadpack\.packobjectshook|"
    r"remote\..*\.(uploadpack|receivepack)"
)
_GIT_RUNS = {  # subcommand -> options whose value is a shell command
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "clone": ("-u", "--upload-pack"),
    "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
}


@functools.cache
def _git_commands() -> frozenset[str]:
    """git's own commands and the git-* programs on PATH (read once)."""
    try:
        listed = subprocess.run(
            ["git", "--list-cmds=main,others,nohelpers"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(listed.split())


def option_values(args: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """The values of options ``names`` (`-e X`, `--rsh X`, `--rsh=X`)."""
    values = []
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg in names and index + 1 < len(args):
            values.append(args[index + 1])
        elif "=" in arg and arg.split("=", 1)[0] in names and arg.startswith("--"):
            values.append(arg.split("=", 1)[1])
    return values


def git(walk: Walker, words: tuple[str, ...], literal: bool, depth: int) -> None:
    """`git [global options] SUB args`: the plain `git SUB args`, with what `-c` makes git run."""
    args = list(words[1:])
    aliases: dict[str, str] = {}
    while args and args[0].startswith("-"):
        option = args.pop(0)
        name, equals, value = option.partition("=")
        if name in _GIT_OPAQUE_OPTIONS and (equals or name == "--config-env"):
            walk.unknown(words, f"sets {name}, which changes what git runs")
            continue
        if name in _GIT_VALUED and not equals and args:
            value = args.pop(0)
        if name == "-c":
            _git_config(walk, words, value, aliases, depth)
    if not args:
        return
    sub = args[0]
    plain = ("git", *args)
    if plain != words:
        walk.target(plain, literal)
    if sub in aliases:
        value = aliases.pop(sub)
        if value.startswith("!"):
            walk.line(" ".join((value[1:], *args[1:])), depth)
        else:
            expanded = ("git", *value.split(), *args[1:])
            walk.target(expanded, literal)
            walk.spell(expanded, literal, depth + 1)
        return
    for value in option_values(tuple(args[1:]), _GIT_RUNS.get(sub, ())):
        walk.line(value, depth, strict=False)
    if sub == "bisect" and len(args) > 2 and args[1] == "run":
        walk.target(tuple(args[2:]), literal)
        walk.spell(tuple(args[2:]), literal, depth + 1)
    elif sub == "submodule" and "foreach" in args:
        rest = [a for a in args[args.index("foreach") + 1 :] if not a.startswith("--")]
        if rest:
            walk.line(" ".join(rest), depth)
    elif sub == "config":
        _git_config_command(walk, words, args, depth)
    elif sub == "filter-branch":
        walk.unknown(words, "runs filters the rules cannot follow")
    elif walk.resolve and not sub.startswith("-") and sub not in _git_commands():
        walk.unknown(words, f"runs `git {sub}`, not a git command: an alias from git's config runs something unknown")


def _git_config_command(walk: Walker, words: tuple[str, ...], args: list[str], depth: int) -> None:
    """`git config KEY VALUE`: a program key's value runs later, when git reads it."""
    operands = [arg for arg in args[1:] if not arg.startswith("-")]
    if len(operands) >= 2:
        key = operands[0].lower()
        if key.startswith("alias.") and operands[1].startswith("!"):
            walk.line(operands[1][1:], depth, strict=False)
        elif _GIT_PROGRAM_KEYS.fullmatch(key):
            walk.line(operands[1].removeprefix("!"), depth, strict=False)
        elif key in ("core.hookspath", "include.path") or key.startswith("includeif."):
            walk.unknown(words, f"sets git's `{key}`, which makes git run or read something the rules cannot see")


def _git_config(walk: Walker, words: tuple[str, ...], setting: str, aliases: dict[str, str], depth: int) -> None:
    key, _, value = setting.partition("=")
    key = key.lower()
    if key.startswith("alias."):
        aliases[setting.split("=", 1)[0][6:]] = value
    elif _GIT_PROGRAM_KEYS.fullmatch(key):
        if value and value.lower() not in ("true", "false", "0", "1", "yes", "no", "on", "off"):
            walk.line(value.removeprefix("!"), depth, strict=False)
        if key == "core.fsmonitor" and value.lower() in ("true", "1", "yes", "on"):
            return
    elif key in _GIT_PLAIN_EXCEPT or not _GIT_PLAIN_KEYS.fullmatch(key):
        walk.unknown(words, f"sets git's `{key}`, which may make git run something the rules cannot see")


# --- interpreters --------------------------------------------------------------------------------


def is_device(path: str) -> bool:
    """Standard input, a descriptor or a device rather than a file (`-f /dev/stdin`, `-`, a process
    substitution `<(…)`, which the program sees as `/dev/fd/N`)."""
    return path == "-" or path.startswith(("/dev/", "/proc/", "<(", ">("))


def awk(walk: Walker, words: tuple[str, ...]) -> None:
    args, index, from_file = words[1:], 0, False
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        if arg in ("-l", "--load") or arg.startswith(("-l", "--load=")):
            walk.unknown(words, "loads an awk extension")
            return
        if arg in ("-f", "--file", "-E", "--exec") or arg.startswith(("--file=", "--exec=")):
            from_file = True
            value = arg.split("=", 1)[1] if "=" in arg else (args[index + 1] if index + 1 < len(args) else "")
            if is_device(value):
                walk.unknown(words, "is an awk program read from its input or a device")
                return
        index += 2 if arg in ("-F", "-v", "-f", "--file", "-E", "--exec", "-i", "--include", "--assign") else 1
    if from_file or index >= len(args):
        return
    if re.search(r"system|\||@load", args[index]):
        walk.unknown(words, "is an awk program that may run commands (system, pipes)")


_SED_SUBSTITUTE = re.compile(r"s(.)((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1([A-Za-z0-9]*)", re.S)
_SED_ADDRESS = re.compile(r"/(?:\\.|[^/])*/|\\(.)(?:\\.|(?!\1).)*\1", re.S)
_SED_EXECUTE = re.compile(r"(?:^|[;\n{}!0-9$,~+])\s*e")


def sed(walk: Walker, words: tuple[str, ...]) -> None:
    args = words[1:]
    scripts = option_values(args, ("-e", "--expression"))
    scripts += [a[2:] for a in args if a.startswith("-e") and len(a) > 2]
    if any(is_device(value) for value in option_values(args, ("-f", "--file"))):
        walk.unknown(words, "is a sed script read from its input or a device")
        return
    if not scripts and not any(a in ("-f", "--file") or a.startswith("--file=") for a in args):
        operands = [a for a in args if not a.startswith("-")]
        scripts = operands[:1]
    for script in scripts:
        flags = [match.group(4) for match in _SED_SUBSTITUTE.finditer(script)]
        rest = _SED_ADDRESS.sub(";", _SED_SUBSTITUTE.sub(";", script))
        if any("e" in f for f in flags) or _SED_EXECUTE.search(rest):
            walk.unknown(words, "is a sed script that runs commands (e)")
            return


def interpreter(walk: Walker, words: tuple[str, ...], stdin: str) -> None:
    base = words[0].rsplit("/", 1)[-1]
    name = "python" if _PYTHON.fullmatch(base) else base
    shorts, longs = _INLINE_SHORT.get(name), _INLINE_LONG.get(name, ())
    if shorts is None and not longs:
        if base == "sqlite3" and any(a.lstrip().startswith((".sh", ".system")) for a in words[1:]):
            walk.unknown(words, "runs a command through sqlite3's .shell")
        return
    args = words[1:]
    valued = _VALUED_SHORT.get(name, "")
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            break
        lowered = arg.lower() if name in ("pwsh", "powershell") else arg
        vim_command = arg.startswith("+") and name in ("vim", "vi", "nvim", "ex")
        if lowered in longs or lowered.split("=", 1)[0] in longs or vim_command:
            walk.unknown(words, "runs inline code the rules cannot see into")
            return
        if not arg.startswith("-") or arg == "-":
            break
        if arg.startswith("--"):
            continue
        for position, letter in enumerate(arg[1:], 1):
            if shorts and letter in shorts:
                walk.unknown(words, "runs inline code the rules cannot see into")
                return
            if letter in valued:
                skip = position == len(arg) - 1  # `-W ignore`: the next word is the value
                break
    if any(arg.startswith("data:") or "=data:" in arg for arg in args):
        walk.unknown(words, "loads code from a data: URL")
        return
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if operands and is_device(operands[0]) and name in _STDIN_CODE:
        walk.unknown(words, "runs code read from its input or a device")
        return
    if operands and walk.written(operands[0]):
        walk.unknown(words, "runs a script the same line writes")
        return
    if name in _STDIN_CODE and stdin and "-m" not in args and (not operands or operands[0] == "-") and stdin != "file":
        walk.unknown(words, "runs code read from its input")


# --- wrappers whose options are known ------------------------------------------------------------

# Wrapper -> (options that take a value, options that do not, positional words before the command).
# For these the wrapped command is found exactly (`timeout 5 grep rm f` runs grep, not rm); an option
# not listed makes every later word a possible start again (see_through._wrapper).
_WRAPPER_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str], int]] = {
    "timeout": (
        frozenset({"-s", "--signal", "-k", "--kill-after"}),
        frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
        1,
    ),
    "nice": (frozenset({"-n", "--adjustment"}), frozenset(), 0),
    "env": (
        frozenset({"-u", "--unset", "-C", "--chdir"}),
        frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"}),
        0,
    ),
    "xargs": (
        frozenset(
            {
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "-I",
                "-L",
                "--max-lines",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "--process-slot-var",
            }
        ),
        frozenset(
            {
                "-0",
                "--null",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-p",
                "--interactive",
                "-x",
                "--exit",
                "-o",
                "--open-tty",
            }
        ),
        0,
    ),  # fmt: skip
    "time": (
        frozenset({"-f", "--format", "-o", "--output"}),
        frozenset({"-p", "--portability", "-a", "--append", "-v", "--verbose", "-q", "--quiet"}),
        0,
    ),
    "nohup": (frozenset(), frozenset(), 0),
    "command": (frozenset(), frozenset({"-p"}), 0),
    "builtin": (frozenset(), frozenset(), 0),
    "exec": (frozenset({"-a"}), frozenset({"-c", "-l"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), frozenset(), 0),
    "setsid": (frozenset(), frozenset({"-c", "--ctty", "-f", "--fork", "-w", "--wait"}), 0),
    "ionice": (
        frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
        frozenset({"-t", "--ignore"}),
        0,
    ),
}


def exact_command_start(program: str, args: tuple[str, ...]) -> int | None:
    """Where the command a known wrapper runs starts in ``args``; None when an option is unknown."""
    spec = _WRAPPER_OPTIONS.get(program)
    if spec is None:
        return None
    valued, flags, positional = spec
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if program == "env" and "=" in arg and not arg.startswith("-"):
            index += 1  # NAME=value
            continue
        if not arg.startswith("-") or arg == "-" and program != "env":
            break
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if program == "nice" and arg[1:].isdigit():
            index += 1  # nice -5 cmd
        elif name in valued:
            index += 1 if "=" in arg or (len(arg) > 2 and not arg.startswith("--")) else 2
        elif name in flags:
            index += 1
        elif not arg.startswith("--") and len(arg) > 2 and arg[:2] in valued:
            index += 1  # -n5: the value attached
        else:
            return None
    return index + positional if index + positional <= len(args) else None

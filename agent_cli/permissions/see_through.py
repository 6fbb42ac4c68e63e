"""Every other form under which a simple command runs a command, for deny and ask rules.

``timeout 5 rm x``, ``bash -o pipefail -c 'rm x'``, ``bash <<EOF``, ``trap 'rm x' EXIT``,
``git -C . push`` and ``git -c alias.p='!rm x' p`` all run a command that a rule names; this module
finds it. What it cannot see through (inline code for an interpreter, a shell reading a pipe, an
``eval`` of a value known only when it runs, a program it cannot resolve) it reports as *opaque*,
with the reason: the engine then asks (and ``agent exec`` refuses) while a Bash deny or ask rule is
in force. docs/safety.md lists exactly what is seen through and what is not.

The walk runs only while such rules exist (``Permissions.decide``), on every shell call: it reads
no file but a shell script the line runs, and stats only the programs the line names.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.permissions.rules import Target
from agent_cli.permissions.shell_parse import ParsedLine, parse_command_line

_DEPTH = 8
_BUDGET = 400  # spellings for one line; past it the line is opaque
_SCRIPT_BYTES = 256 * 1024

SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "lksh", "pdksh"}
)
# Programs that run another command given by their later words. Every later word that is not an
# option may start that command (`timeout 5 rm x`, `sudo -u me rm x`): deny and ask rules see all
# of those, so an option these programs take with a value cannot hide the command.
WRAPPERS = frozenset(
    {
        "env", "command", "builtin", "exec", "nohup", "time", "setsid", "nice", "ionice", "chrt", "taskset",
        "timeout", "stdbuf", "sudo", "doas", "pkexec", "xargs", "busybox", "coproc", "watch", "flock", "script",
        "su", "runuser", "sg", "setpriv", "strace", "ltrace", "valgrind", "parallel", "unshare", "nsenter",
        "chroot", "firejail", "systemd-run", "catchsegv", "fakeroot", "proot", "dbus-run-session", "xvfb-run",
        "unbuffer", "tmux", "screen", "nix-shell", "caffeinate", "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1", "uv", "uvx", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "mamba",
        "micromamba", "mise", "asdf", "direnv", "bundle", "npx", "pnpx", "bunx",
    }
)  # fmt: skip
# Wrappers that also take the command as one shell string (`watch 'rm x'`, `su -c 'rm x'`).
STRING_WRAPPERS = frozenset(
    {"watch", "flock", "script", "su", "runuser", "sg", "parallel", "tmux", "screen", "nix-shell", "coproc"}
)
# Wrappers that append their input to the command (`… | xargs sh -c`).
APPENDING = frozenset({"xargs", "parallel"})
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
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "original-awk"})
# Options of other programs whose value is a shell command: seen through.
_COMMAND_OPTIONS = {
    "tar": ("--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script"),
    "rsync": ("-e", "--rsh"),
    "zip": ("-TT", "--unzip-command"),
}
# Variables that name a command the next program runs (parsed), and ones that change what runs in
# a way the rules cannot follow (opaque).
COMMAND_VARIABLES = frozenset(
    {
        "PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH",
        "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE",
        "PROMPT_COMMAND", "RSYNC_RSH",
    }
)  # fmt: skip
OPAQUE_VARIABLES = frozenset(
    {
        "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS",
        "BASHOPTS", "GIT_EXEC_PATH", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT",
        "PERL5LIB", "RUBYOPT", "NODE_OPTIONS", "IFS",
    }
)  # fmt: skip
# Folders whose programs are the system's: a binary elsewhere may be a renamed copy of anything.
_SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/opt/", "/nix/store/", "/snap/", "/etc/")

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


@dataclass
class Walk:
    """One shell line's walk: what it found, and why it could not see through something."""

    cwd: Path
    resolve: bool  # stat programs and read scripts (only while Bash deny/ask rules exist)
    line_writes: frozenset[str] = frozenset()
    aliases: dict[str, str | None] = field(default_factory=dict)
    found: list[Target] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set)

    def unknown(self, words: tuple[str, ...] | str, why: str) -> None:
        text = words if isinstance(words, str) else " ".join(words)
        if len(text) > 80:
            text = text[:77] + "…"
        self.opaque.append(f"`{text}` {why}")

    def target(self, words: tuple[str, ...], literal: bool) -> None:
        self.found.append(command_target(words, literal))

    def line(self, text: str, depth: int, strict: bool = True, appended: bool = False) -> None:
        """The commands of a shell string that something runs (`bash -c TEXT`, `eval TEXT`)."""
        parsed = parse_command_line(text)
        if strict and not parsed.readable:
            self.unknown(text, "is shell code the parser cannot read")
        self.aliases.update(parsed.aliases)
        walk_line(self, parsed, depth + 1, appended)


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


def walk_line(walk: Walk, parsed: ParsedLine, depth: int, appended: bool = False) -> None:
    for name, value in parsed.assigns:
        variable(walk, name, value, depth)
    for simple in parsed.commands:
        walk.target(simple.words, simple.literal)
        spell(walk, simple.words, simple.literal, depth, simple.stdin, simple.stdin_text, appended)
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
        walk.unknown(words, "nests too many commands to follow")
        return
    program = words[0]
    base = program.rsplit("/", 1)[-1]
    args = words[1:]
    if not literal and (program == "" or "$" in program or "`" in program):
        walk.unknown(words, "runs a program known only when it runs")
        return
    if base != program:
        walk.target((base, *args), literal)
    if program in walk.aliases:
        value = walk.aliases.pop(program)  # an alias is not expanded inside itself
        if value is None:
            walk.unknown(words, "runs an alias whose value is known only when it runs")
        else:
            walk.line(" ".join((value, *args)), depth)
        walk.aliases[program] = value
    if walk.resolve:
        _resolve(walk, words, literal, depth)
    if base in SHELLS:
        _shell(walk, words, depth, stdin, stdin_text, appended)
    elif base in ("eval", "trap", "source", "."):
        _builtin(walk, words, literal, depth)
    elif base in WRAPPERS or base.startswith("ld-linux"):
        _wrapper(walk, words, literal, depth)
    elif base == "find":
        _find(walk, words, literal, depth)
    elif base == "git":
        _git(walk, words, literal, depth)
    elif base in _AWKS:
        _awk(walk, words)
    elif base == "sed":
        _sed(walk, words)
    elif base in _COMMAND_OPTIONS:
        for value in _option_values(args, _COMMAND_OPTIONS[base]):
            walk.line(value.removeprefix("exec="), depth, strict=False)
    elif base == "ssh":
        for value in _option_values(args, ("-o",)):
            key, _, command = value.partition("=")
            if key.strip().lower() in ("proxycommand", "localcommand", "knownhostscommand"):
                walk.line(command, depth, strict=False)
    else:
        _interpreter(walk, words, stdin)


def _option_values(args: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
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
        return
    path = absolute(walk.cwd, program)
    if path in walk.line_writes or not os.path.exists(path):
        walk.unknown(words, "runs a program that does not exist yet, so which one is unknown")
        return
    if os.path.isdir(path):
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


def _script(walk: Walk, path: str, depth: int) -> None:
    """A shell script the line runs: its commands, when it can be read before the line runs."""
    if not walk.resolve:
        return
    full = absolute(walk.cwd, path)
    if full in walk.line_writes:
        walk.unknown(path, "is a script the same line writes")
        return
    try:
        if os.path.getsize(full) > _SCRIPT_BYTES:
            walk.unknown(path, "is a script too large to read")
            return
        with open(full, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        walk.unknown(path, "is a script that cannot be read before it runs")
        return
    walk.line(text, depth)


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
                walk.line(value if equals else (args[index + 1] if index + 1 < len(args) else ""), depth)
                return
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
            walk.line(rest[0], depth)
        else:
            walk.unknown(words, "is a shell whose command string comes from elsewhere")
        return
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
        walk.unknown(words, "is a shell reading commands from a pipe")


def _builtin(walk: Walk, words: tuple[str, ...], literal: bool, depth: int) -> None:
    base, args = words[0], words[1:]
    if base == "eval":
        if not literal:
            walk.unknown(words, "evaluates a value known only when it runs")
        elif args:
            walk.line(" ".join(args), depth)
    elif base == "trap":
        if args and args[0] == "--":
            args = args[1:]
        if len(args) >= 2 and not args[0].startswith("-"):
            if "$" in args[0] or "`" in args[0]:
                walk.unknown(words, "sets a trap whose command is known only when it runs")
            else:
                walk.line(args[0], depth)
    elif args:  # source / .
        if not literal:
            walk.unknown(words, "reads a script known only when it runs")
        else:
            _script(walk, args[0], depth)


def _wrapper(walk: Walk, words: tuple[str, ...], literal: bool, depth: int) -> None:
    base = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if base == "env" and any(a in ("-S", "--split-string") or a.startswith(("-S", "--split-string=")) for a in args):
        walk.unknown(words, "splits a string into a command (env -S)")
        return
    appended = base in APPENDING
    if base == "parallel" and not any(not a.startswith("-") for a in args):
        walk.unknown(words, "runs commands read from its input")
        return
    for index, arg in enumerate(args):
        if arg.startswith("-") or ("=" in arg and base == "env"):
            if base in STRING_WRAPPERS and arg.startswith("--") and "=" in arg:
                walk.line(arg.split("=", 1)[1], depth, strict=False)  # su --command=…
            continue
        inner = args[index:]
        walk.target(inner, literal)
        spell(walk, inner, literal, depth + 1, appended=appended)
        if base in STRING_WRAPPERS:
            walk.line(arg, depth, strict=False)
            if len(inner) > 1:
                walk.line(" ".join(inner), depth, strict=False)  # watch and parallel join their words
    if appended and any("{}" in arg for arg in args):
        walk.unknown(words, "builds a command from its input")


def _find(walk: Walk, words: tuple[str, ...], literal: bool, depth: int) -> None:
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
            spell(walk, command, literal, depth + 1, appended=True)


def _git(walk: Walk, words: tuple[str, ...], literal: bool, depth: int) -> None:
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
            spell(walk, expanded, literal, depth + 1)
        return
    for value in _option_values(tuple(args[1:]), _GIT_RUNS.get(sub, ())):
        walk.line(value, depth, strict=False)
    if sub == "bisect" and len(args) > 2 and args[1] == "run":
        walk.target(tuple(args[2:]), literal)
        spell(walk, tuple(args[2:]), literal, depth + 1)
    elif sub == "submodule" and "foreach" in args:
        rest = [a for a in args[args.index("foreach") + 1 :] if not a.startswith("--")]
        if rest:
            walk.line(" ".join(rest), depth)
    elif sub == "filter-branch":
        walk.unknown(words, "runs filters the rules cannot follow")
    elif walk.resolve and not sub.startswith("-") and sub not in _git_commands():
        walk.unknown(words, f"runs `git {sub}`, not a git command: an alias from git's config runs something unknown")


def _git_config(walk: Walk, words: tuple[str, ...], setting: str, aliases: dict[str, str], depth: int) -> None:
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


def _awk(walk: Walk, words: tuple[str, ...]) -> None:
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
        index += 2 if arg in ("-F", "-v", "-f", "--file", "-E", "--exec", "-i", "--include", "--assign") else 1
    if from_file or index >= len(args):
        return
    if re.search(r"system|\||@load", args[index]):
        walk.unknown(words, "is an awk program that may run commands (system, pipes)")


_SED_SUBSTITUTE = re.compile(r"s(.)((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1([A-Za-z0-9]*)", re.S)
_SED_ADDRESS = re.compile(r"/(?:\\.|[^/])*/|\\(.)(?:\\.|(?!\1).)*\1", re.S)
_SED_EXECUTE = re.compile(r"(?:^|[;\n{}!0-9$,~+])\s*e")


def _sed(walk: Walk, words: tuple[str, ...]) -> None:
    args = words[1:]
    scripts = _option_values(args, ("-e", "--expression"))
    scripts += [a[2:] for a in args if a.startswith("-e") and len(a) > 2]
    if not scripts and not any(a in ("-f", "--file") or a.startswith("--file=") for a in args):
        operands = [a for a in args if not a.startswith("-")]
        scripts = operands[:1]
    for script in scripts:
        flags = [match.group(4) for match in _SED_SUBSTITUTE.finditer(script)]
        rest = _SED_ADDRESS.sub(";", _SED_SUBSTITUTE.sub(";", script))
        if any("e" in f for f in flags) or _SED_EXECUTE.search(rest):
            walk.unknown(words, "is a sed script that runs commands (e)")
            return


def _interpreter(walk: Walk, words: tuple[str, ...], stdin: str) -> None:
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
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if name in _STDIN_CODE and stdin and "-m" not in args and (not operands or operands[0] == "-") and stdin != "file":
        walk.unknown(words, "runs code read from its input")

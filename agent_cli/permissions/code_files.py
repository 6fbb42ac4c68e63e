"""Programs that read code from a file: a makefile, a justfile, m4's input, gdb's `-x` script.

What such a file does is not judged (docs/safety.md, "Not judged"), as `python3 tool.py` is not.
But code the line itself makes is: a process substitution (`make -f <(printf 'a:\\n\\tcurl x')`),
standard input or a device (`make -f - <<EOF`, `m4 /dev/stdin`), or a file the same line writes
(`printf … > Makefile; make`). The rules cannot read it before it runs, so it is opaque. The
variables make runs as programs (`make SHELL=… CC=…`) are judged as commands.
"""

from __future__ import annotations

import os

from agent_cli.permissions.programs import Walker, is_device

# program -> the options whose value is a code file
_OPTIONS: dict[str, tuple[str, ...]] = {
    "make": ("-f", "--file", "--makefile"),
    "gmake": ("-f", "--file", "--makefile"),
    "bmake": ("-f",),
    "pmake": ("-f",),
    "remake": ("-f", "--file", "--makefile"),
    "ninja": ("-f",),
    "samu": ("-f",),
    "cmake": ("-P", "-C"),
    "just": ("-f", "--justfile"),
    "rake": ("-f", "--rakefile"),
    "scons": ("-f", "--file", "--makefile", "--sconstruct"),
    "ant": ("-f", "-file", "-buildfile", "--buildfile"),
    "gradle": ("-b", "--build-file", "-c", "--settings-file", "-I", "--init-script"),
    "gdb": ("-x", "--command", "-ix", "--init-command"),
    "vim": ("-S", "-s", "-u"),
    "nvim": ("-S", "-s", "-u"),
    "vi": ("-S", "-s", "-u"),
    "ex": ("-S", "-s", "-u"),
    "sqlite3": ("-init",),
    "expect": ("-f",),
    "dc": ("-f", "--file"),
    "at": ("-f",),
    "batch": ("-f",),
}
# Programs whose first operand is code, and that read code from their input when given none.
_OPERAND_CODE = frozenset({"m4", "dc", "gnuplot", "tclsh", "wish", "expect", "crontab"})
# Programs that read commands from their input whatever their operands (`ed f <<< '!cmd'`) or
# install them to run later (`at now <<< 'cmd'`, `crontab -`).
_INPUT_COMMANDS = frozenset({"ed", "red", "at", "batch", "crontab", "gdb"})
# The files a build tool reads when no option names one, relative to its folder (`-C DIR`).
_DEFAULT_FILES: dict[str, tuple[str, ...]] = {
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "gmake": ("GNUmakefile", "makefile", "Makefile"),
    "remake": ("GNUmakefile", "makefile", "Makefile"),
    "bmake": ("makefile", "Makefile", "BSDmakefile"),
    "ninja": ("build.ninja",),
    "just": ("justfile", "Justfile", ".justfile"),
    "rake": ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"),
    "scons": ("SConstruct", "Sconstruct", "sconstruct"),
}
_MAKES = frozenset({"make", "gmake", "bmake", "pmake", "remake"})
# make's variables that name a program its built-in rules (or a makefile's `$(MAKE)`) run.
_MAKE_PROGRAMS = frozenset(
    {
        "SHELL", "MAKE", "CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "PC", "M4", "RM", "LEX", "YACC", "CO",
        "GET", "LINT", "MAKEINFO", "TEX", "TEXI2DVI", "WEAVE", "CWEAVE", "TANGLE", "CTANGLE", "CHECKOUT",
    }
)  # fmt: skip


def code_files(walk: Walker, words: tuple[str, ...], stdin: str, depth: int) -> None:
    """Report code a program reads that the line itself makes (see the module's text)."""
    base = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    named = _option_values(args, _OPTIONS.get(base, ()))
    operands = [arg for arg in args if not arg.startswith("-") or arg == "-"]
    if base in _MAKES:
        _make_variables(walk, args, depth)
        operands = []  # make's operands are targets and variables
    elif base in _OPERAND_CODE and operands:
        named.append(operands[0])
    for path in named:
        if is_device(path):
            walk.unknown(words, "runs code read from its input, a device or a process substitution")
            return
        if walk.written(path):
            walk.unknown(words, "runs code from a file the same line writes")
            return
    if not named and base in _DEFAULT_FILES:
        folder = (_option_values(args, ("-C", "--directory")) or ["."])[-1]
        if any(walk.written(os.path.join(folder, name)) for name in _DEFAULT_FILES[base]):
            walk.unknown(words, "runs a build file the same line writes")
            return
    reads_input = base in _INPUT_COMMANDS or (base in _OPERAND_CODE and not named)
    if reads_input and stdin and stdin != "file" and "-l" not in args:
        walk.unknown(words, "runs commands read from its input")


def _make_variables(walk: Walker, args: tuple[str, ...], depth: int) -> None:
    for arg in args:
        name, equals, value = arg.partition("=")
        if equals and name.rstrip(":?+") in _MAKE_PROGRAMS and value:
            walk.line(value, depth, strict=False)


def _option_values(args: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """The values of options ``names``: `-f X`, `-fX`, `--file=X`."""
    values = []
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg in names:
            if index + 1 < len(args):
                values.append(args[index + 1])
        elif arg.startswith("--") and arg.split("=", 1)[0] in names and "=" in arg:
            values.append(arg.split("=", 1)[1])
        elif not arg.startswith("--") and any(len(n) == 2 and arg.startswith(n) and len(arg) > 2 for n in names):
            values.append(arg[2:])
    return values

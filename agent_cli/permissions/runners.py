"""Programs that run a command given by one subcommand or address, for the rules.

`ip netns exec NS curl x`, `npm exec -- curl x`, `nix develop -c curl x` run the words after the
subcommand as wrappers do (vocabulary.RUNNER_SUBCOMMANDS); `socat - EXEC:'curl x'` and
`SYSTEM:'curl x'` run an address's command. `parallel -a FILE` with no command runs the lines of
FILE as commands: opaque.
"""

from __future__ import annotations

from agent_cli.permissions.programs import Walker
from agent_cli.permissions.vocabulary import RUNNER_SUBCOMMANDS

_SOCAT_COMMANDS = ("exec:", "system:")
# parallel's options whose value is a file of arguments (or, with no command, of commands).
_PARALLEL_ARG_FILES = frozenset({"-a", "--arg-file", "--a"})
_PARALLEL_VALUED = frozenset(
    {"-j", "--jobs", "-S", "--sshlogin", "--sshloginfile", "--slf", "-d", "--delimiter", "-E", "-I", "-n",
     "-N", "-L", "--max-args", "--max-lines", "--results", "--joblog", "--tmpdir", "--env", "--delay",
     "--timeout", "--retries", "--colsep", "-C", "--workdir", "--wd", "--basefile", "--bf", "--return",
     "--transfer-file", "--tf", "--load", "--memfree", "--nice", "--tag-string", "--tagstring", "--arg-sep",
     "--arg-file-sep", "--header", "--halt", "--shebang-wrap"}
)  # fmt: skip


def subcommand_start(program: str, args: tuple[str, ...]) -> int | None:
    """Where the wrapped part starts in ``args`` (after the subcommand that runs a command), or None."""
    names = RUNNER_SUBCOMMANDS.get(program)
    if not names:
        return None
    for index, arg in enumerate(args):
        if arg in names:
            return index + 1
    return None


def socat(walk: Walker, words: tuple[str, ...], depth: int) -> None:
    """`socat A B`: an `EXEC:` or `SYSTEM:` address runs a command (its options after a comma)."""
    for address in words[1:]:
        if address.lower().startswith(_SOCAT_COMMANDS):
            command = address.split(":", 1)[1]
            # `EXEC:cmd,pty,stderr`: socat's options follow the first comma.
            walk.line(command.split(",", 1)[0], depth, strict=False, stdin=("pipe", ""))


def parallel_without_command(args: tuple[str, ...]) -> bool:
    """`parallel -a FILE` (or `:::: FILE`) with no command: FILE's lines are the commands."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in (":::", ":::+"):
            return False  # the arguments after it are the commands: parsed as shell (STRING_WRAPPERS)
        if arg in ("::::", "::::+"):
            return True  # the lines of the files after it are the commands
        if arg in _PARALLEL_ARG_FILES or arg in _PARALLEL_VALUED:
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        return False
    return True

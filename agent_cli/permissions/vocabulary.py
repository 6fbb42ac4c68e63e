"""The programs and variables the rule engine knows by name (see_through.py uses them)."""

from __future__ import annotations

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
# Wrappers that start an interactive shell when given no command (`su root <<EOF`).
SHELL_STARTERS = frozenset({"su", "sudo", "doas", "runuser", "script", "sg", "newgrp", "pkexec", "nix-shell"})
# Wrappers that append their input to the command (`… | xargs sh -c`).
APPENDING = frozenset({"xargs", "parallel"})
# Options of other programs whose value is a shell command: seen through.
COMMAND_OPTIONS = {
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

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
        # the shell's and coreutils' own
        "env", "command", "builtin", "exec", "nohup", "time", "setsid", "nice", "ionice", "chrt", "taskset",
        "timeout", "stdbuf", "xargs", "busybox", "toybox", "coproc", "watch", "flock", "script", "parallel", "sem",
        "niceload", "timelimit", "prlimit", "cpulimit", "numactl", "hwloc-bind", "setarch", "linux32", "linux64",
        "i386", "x86_64", "schedtool", "cgexec", "trickle", "nocache", "eatmydata", "catchsegv", "retry",
        # other users, other privileges, other namespaces
        "sudo", "doas", "pkexec", "run0", "su", "runuser", "sg", "setpriv", "capsh", "gosu", "su-exec", "chpst",
        "setuidgid", "envuidgid", "envdir", "softlimit", "setlock", "lckdo", "unshare", "nsenter", "chroot",
        "firejail", "bwrap", "nsjail", "minijail0", "systemd-run", "systemd-inhibit", "fakeroot", "fakechroot",
        "faketime", "proot", "runcon", "aa-exec", "rootlesskit", "flatpak-spawn", "host-spawn",
        "distrobox-host-exec", "tini", "dumb-init", "catatonit", "daemonize", "start-stop-daemon",
        # sessions, agents and terminals that run a command inside them
        "ssh-agent", "gpg-agent", "dbus-run-session", "dbus-launch", "xvfb-run", "xinit", "startx", "unbuffer",
        "rlwrap", "grc", "tmux", "screen", "dtach", "abduco", "xterm", "winpty", "caffeinate",
        # moreutils and friends: run a command and do something with its output or status
        "chronic", "ifne", "pee", "mispipe", "zrun", "run-one", "run-this-one", "keep-one-running",
        "run-one-constantly", "run-one-until-success", "entr", "watchexec", "hyperfine",
        # debuggers, tracers and profilers that start the program they are given
        "strace", "ltrace", "valgrind", "heaptrack", "rr", "perf",
        # proxies and build caches that run the command through them
        "torsocks", "proxychains", "proxychains4", "tsocks", "ccache", "sccache", "distcc", "icecc",
        # the dynamic loader
        "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
        # environment managers and secret injectors
        "nix-shell", "uv", "uvx", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "mamba", "micromamba",
        "mise", "asdf", "direnv", "bundle", "npx", "pnpx", "bunx", "pyenv", "rbenv", "nodenv", "goenv", "jenv",
        "volta", "fnm", "pipx", "dotenv", "dotenvx", "env-cmd", "cross-env", "aws-vault", "doppler", "infisical",
        "chamber", "envchain", "sops", "mpirun", "mpiexec", "srun",
    }
)  # fmt: skip
# Programs that run a command given after one of their subcommands (`ip netns exec NS cmd`,
# `npm exec -- cmd`, `nix develop -c cmd`); their other subcommands run nothing from the line.
RUNNER_SUBCOMMANDS = {
    "ip": frozenset({"exec"}),
    "npm": frozenset({"exec", "x"}),
    "pnpm": frozenset({"exec", "dlx", "x"}),
    "yarn": frozenset({"exec", "dlx"}),
    "bun": frozenset({"x", "exec"}),
    "nix": frozenset({"develop", "shell", "run", "-c", "--command"}),
    "guix": frozenset({"shell", "environment"}),
    "podman": frozenset({"unshare"}),
    "buildah": frozenset({"unshare"}),
    "toolbox": frozenset({"run"}),
    "distrobox": frozenset({"enter"}),
    "op": frozenset({"run"}),
    "machinectl": frozenset({"shell"}),
    "gdb": frozenset({"--args"}),
    "lldb": frozenset({"--"}),
}
# Wrappers that also take the command as one shell string (`watch 'rm x'`, `su -c 'rm x'`).
STRING_WRAPPERS = frozenset(
    {
        "watch", "flock", "script", "su", "runuser", "sg", "parallel", "sem", "tmux", "screen", "nix-shell", "coproc",
        "capsh", "pee", "mispipe", "watchexec", "hyperfine", "entr", "sops", "dtach", "xterm", "run0",
    }
)  # fmt: skip
# Wrappers that start an interactive shell when given no command (`su root <<EOF`).
SHELL_STARTERS = frozenset({"su", "sudo", "doas", "runuser", "script", "sg", "newgrp", "pkexec", "nix-shell"})
# Wrappers that append their input to the command (`… | xargs sh -c`).
APPENDING = frozenset({"xargs", "parallel"})
# Options of other programs whose value is a shell command: seen through.
COMMAND_OPTIONS = {
    "tar": ("--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script"),
    "rsync": ("-e", "--rsh"),
    "zip": ("-TT", "--unzip-command"),
    "nc": ("-e", "-c"),
    "ncat": ("-e", "--exec", "-c", "--sh-exec"),
    "netcat": ("-e", "-c"),
    "nodemon": ("--exec", "-x"),
    "sbatch": ("--wrap",),
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

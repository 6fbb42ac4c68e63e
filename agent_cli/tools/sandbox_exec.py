"""The Landlock launcher: restrict this process, then exec the command in its place.

    python -I -S sandbox_exec.py '{"writable": [...], "files": [...], "network": false}' -- ARGV...

Run by path (not ``-m``) so that starting it costs a bare interpreter and nothing else; it
imports only its stdlib-only siblings. Restricting in a fresh process and then ``execvp``
avoids ``preexec_fn`` (unsafe with threads). If the sandbox cannot be applied the command is
not run: exit 126 with the reason on stderr.
"""

from __future__ import annotations

import json
import os
import sys

if __package__:
    from agent_cli.tools import landlock, seccomp
else:  # run by path: the siblings are plain modules next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import landlock  # type: ignore[no-redef]
    import seccomp  # type: ignore[no-redef]

CANNOT_SANDBOX = 126


def apply(policy: dict) -> None:
    """Apply ``policy`` to this process. Raises OSError when any part fails."""
    network = bool(policy.get("network", False))
    landlock.restrict_writes(policy.get("writable", []), policy.get("files", []), deny_tcp=not network)
    if not network:
        seccomp.deny_inet_sockets()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: sandbox_exec.py POLICY_JSON -- COMMAND...", file=sys.stderr)
        return 2
    try:
        apply(json.loads(argv[0]))
    except (OSError, ValueError) as exc:
        print(f"agent sandbox: cannot apply the sandbox, command not run: {exc}", file=sys.stderr)
        return CANNOT_SANDBOX
    command = argv[2:]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"agent sandbox: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

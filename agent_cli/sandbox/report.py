"""What the sandbox cannot enforce on this machine, measured on the running kernel, for /status.

Each mechanism holds writes, the network and capabilities; the rest depends on the kernel and
on privileges: Landlock scoping of abstract sockets and signals needs ABI 6, and the Landlock
launcher needs a mount namespace (root, or unprivileged user namespaces) to keep protected paths
read-only and cover host sockets.
"""

from __future__ import annotations

from agent_cli.sandbox import landlock
from agent_cli.sandbox.policy import detect_mechanism, landlock_mounts_work

PROTECTED = ".git, .agent, .claude, .mcp.json, git hooks and config and dotfiles stay writable by commands"
SOCKETS = "host Unix sockets outside the workspace are reachable"


def unenforced(network_access: bool) -> list[str]:
    """What a confined command can still do here that the sandbox means to deny."""
    mechanism = detect_mechanism()
    if mechanism.name == "none":
        return ["everything: commands run unconfined"]
    limits = []
    if mechanism.name == "bubblewrap":
        if network_access:
            limits.append("abstract Unix sockets of the host are reachable (the network namespace is shared)")
        return limits
    abi = landlock.abi_version()
    if not landlock_mounts_work():
        limits += [f"{PROTECTED} (no mount namespace: not root and no user namespaces)", SOCKETS]
    if abi < landlock.SCOPE_ABI:
        limits.append(
            f"abstract Unix sockets and signals to the agent's other processes are not scoped (Landlock ABI {abi} < 6)"
        )
    limits.append("other processes are visible (no PID namespace)")
    return limits

"""The launcher: confine this process, then run the command as its child and clean up after it.

    python -I -S launcher.py '{"confine": true, "writable": [...], "files": [...],
                                   "read_only": [...], "hide": [...], "mask": [...],
                                   "network": false}' -- ARGV...

Run by path (not ``-m``) so that starting it costs a bare interpreter and nothing else; it
imports only its stdlib-only siblings. In order: a parent-death signal and child-subreaper
status (supervisor.py), a private mount namespace with the protected paths read-only and host
sockets and the warm exec server's folder covered (mounts.py), no capabilities (capabilities.py), Landlock (landlock.py),
the socket filter, or with the network allowed a filter that only marks the process
(seccomp.py); then the command runs as a child, and whatever it leaves running
is killed when it ends. With ``"confine": false`` only the process lifecycle applies (commands
run without a sandbox still end with the agent); ``supervise`` in place of the JSON says the same
without loading ``json``. With ``"proxy": {"port": P, "socket": PATH}`` (allow-list network) the
launcher also makes the command's network namespace (netns.py) and serves the bridge to the
agent's proxy in it (bridge.py, threads of its own); ``net[+outlive]:P:PATH`` in place of the
JSON is that alone, for bubblewrap, which then keeps this namespace. ``bwrap[+outlive]`` (or
``+bwrap`` after ``net``) says the command is bubblewrap: supervised, and run again when a path it
was to cover vanished before it could (bwrap_retry.py). If the sandbox cannot be applied the command is not
run: exit 126 with the reason on stderr.
"""

from __future__ import annotations

import importlib
import os
import sys

if __package__:
    from agent_cli.sandbox import supervisor
else:  # run by path: the siblings are plain modules next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import supervisor  # type: ignore[no-redef]

CANNOT_SANDBOX = 126
SUPERVISE_ONLY = "supervise"
BUBBLEWRAP = "bwrap"  # bwrap[+outlive]: the command is bubblewrap; supervised, run again if a cover vanished
NETWORK_ONLY = "net"  # net[+outlive][+bwrap]:PORT:SOCKET
TOKEN_ENV = "AGENT_NETWORK_TOKEN"  # bridge.py's; read here, never passed on to the command


def _sibling(name: str):
    """A confinement module, loaded only when a policy needs it: supervising alone (every
    command without Landlock, bubblewrap too) stays a bare interpreter."""
    return importlib.import_module(f"{__package__}.{name}" if __package__ else name)


def parse_policy(text: str) -> dict:
    if text == SUPERVISE_ONLY:
        return {}
    if text.startswith(BUBBLEWRAP):
        return {"confine": False, "outlive_agent": "outlive" in text.split("+")[1:], "bubblewrap": True}
    if text.startswith(NETWORK_ONLY):
        head, port, socket = text.split(":", 2)
        flags = head.split("+")[1:]
        proxy = {"port": int(port), "socket": socket}
        return {"confine": False, "outlive_agent": "outlive" in flags, "bubblewrap": "bwrap" in flags, "proxy": proxy}
    import json  # only a sandbox has a policy to read (json costs a few ms to load)

    return json.loads(text)


def apply(policy: dict) -> None:
    """Apply ``policy`` to this process. Raises OSError when any part fails."""
    proxy = policy.get("proxy")
    if not policy.get("confine", True):
        if proxy:
            _sibling("netns").enter_private_network()
        return
    if not policy:
        return
    capabilities, landlock, mounts, seccomp = map(_sibling, ("capabilities", "landlock", "mounts", "seccomp"))
    network = bool(policy.get("network", False))
    read_only, hidden, masked = policy.get("read_only", []), policy.get("hide", []), policy.get("mask", [])
    if read_only or hidden or masked:
        mounts.enter_private_namespace()
        mounts.bind_read_only(read_only)
        mounts.hide(hidden)
        mounts.mask(masked)
    if proxy and not network:
        _sibling("netns").enter_private_network()  # inside the user namespace made above, if any
    capabilities.drop_all()
    landlock.restrict_writes(policy.get("writable", []), policy.get("files", []), deny_tcp=not network and not proxy)
    if network:
        seccomp.mark()  # the warm exec server knows a sandboxed process by it (agent_cli/socket_peer.py)
    else:
        seccomp.deny_sockets_but_unix(allow_inet=bool(proxy))


def bridge_starter(proxy: dict, token: str):
    """Listen for the bridge before the command starts; the function that starts serving."""
    bridge = _sibling("bridge")
    listener = bridge.listen(int(proxy["port"]))
    notices = os.dup(2)  # the command's stderr, kept past standing aside: refusals are written there
    return lambda: bridge.serve(listener, str(proxy["socket"]), token, notices)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: launcher.py POLICY_JSON -- COMMAND...", file=sys.stderr)
        return 2
    started = retry = None
    try:
        policy = parse_policy(argv[0])
        token = os.environ.pop(TOKEN_ENV, "")
        if not policy.get("outlive_agent", False):  # a kept-alive background process does
            supervisor.bind_to_parent()
        supervisor.become_subreaper()
        apply(policy)
        if proxy := policy.get("proxy"):
            started = bridge_starter(proxy, token)
        if policy.get("bubblewrap"):
            retry = _sibling("bwrap_retry").Retry(argv[2:])
    except (OSError, ValueError) as exc:
        print(f"agent sandbox: cannot apply the sandbox, command not run: {exc}", file=sys.stderr)
        return CANNOT_SANDBOX
    return supervisor.run(argv[2:], started, retry)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

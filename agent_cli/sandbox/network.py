"""The one way out of the sandbox in allow-list mode: the route to the agent's network proxy.

A confined command keeps a network namespace of its own in which the launcher starts a bridge
(bridge.py) on ``127.0.0.1:PORT``; the bridge hands each connection to the proxy's Unix socket
outside (agent_cli/network/), which decides by domain. Commands find it through the proxy
variables git, pip, npm, curl and cargo read (``proxy_env``). The proxy resolves names itself,
so nothing inside needs DNS.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.sandbox.bridge import TOKEN_ENV

PROXY_PORT = 3128  # inside the command's own namespace: no other program's port to clash with
NO_PROXY = "localhost,127.0.0.1,::1"  # servers the command starts itself stay direct
# Variables whose value the login shell snapshot must not put back over the proxy's.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
PROXIED_MARK = "AGENT_SANDBOX_PROXY"  # set for commands that go through the proxy


@dataclass(frozen=True, slots=True)
class ProxyRoute:
    socket: str  # the proxy's Unix socket on the host
    port: int = PROXY_PORT  # where the bridge listens inside the sandbox

    def launcher_policy(self, outlive_agent: bool = False, retry: bool = False) -> str:
        """The launcher's argument for bubblewrap: make the namespace, start the bridge, run bwrap
        (``retry``: again if a path to cover vanished, sandbox/bwrap_retry.py)."""
        return f"net{'+outlive' if outlive_agent else ''}{'+bwrap' if retry else ''}:{self.port}:{self.socket}"

    def spec(self) -> dict[str, object]:
        """The ``proxy`` part of the Landlock launcher's policy."""
        return {"port": self.port, "socket": self.socket}


def proxy_env(route: ProxyRoute, token: str) -> dict[str, str]:
    """What a command in allow-list mode gets in its environment (both cases: curl reads only the
    lower-case ``http_proxy``, others only the upper-case names). ``ALL_PROXY`` is SOCKS5 with
    names resolved by the proxy (``socks5h``)."""
    http = f"http://127.0.0.1:{route.port}"
    values = {
        "HTTP_PROXY": http,
        "HTTPS_PROXY": http,
        "ALL_PROXY": f"socks5h://127.0.0.1:{route.port}",
        "NO_PROXY": NO_PROXY,
    }
    env = {**values, **{name.lower(): value for name, value in values.items()}}
    return {**env, PROXIED_MARK: "1", TOKEN_ENV: token}

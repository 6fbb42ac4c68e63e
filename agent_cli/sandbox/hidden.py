"""What no sandboxed command may read or reach of the agent's own, wherever it lies.

A sandboxed command reads the whole filesystem (only writes are confined), and runs as the same
user. The agent's own secrets and servers are the exception, covered in every sandbox:

- folders, by an empty read-only tmpfs: the warm exec server's (agent_cli/warm/: it runs
  outside every sandbox; so does the app-server's default socket, in the same folder), and
  ``$AGENT_HOME/mcp-auth`` (the MCP servers' OAuth tokens);
- files, by ``/dev/null``: ``$AGENT_HOME/auth.json`` (the API keys `agent login` stored: commands
  never inherit the key variables either) and ``$AGENT_HOME/*.token`` (where the app-server's
  WebSocket token is kept: with it, and the network, a command could drive the server, which runs
  its turns outside the sandbox).

Only what exists when a command starts, and only real folders and files of this user (a symlink
another user planted covers nothing). The names are the ones auth/keys.py and mcp/token_store.py
write (tests/unit/test_sandbox_hidden.py checks they agree).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_cli.paths import agent_home, warm_server_dirs

AUTH_FILE = "auth.json"  # auth/keys.py
MCP_AUTH_DIR = "mcp-auth"  # mcp/token_store.py
TOKEN_SUFFIX = ".token"  # docs/app-server.md keeps the WebSocket token as $AGENT_HOME/app-server.token


def masked_dirs() -> list[str]:
    """The folders to cover with an empty tmpfs, as the paths a mount covers (parents resolved)."""
    return _own([*warm_server_dirs(), agent_home() / MCP_AUTH_DIR], stat.S_ISDIR)


def secret_files() -> list[str]:
    """The files to cover with ``/dev/null``."""
    home = agent_home()
    try:
        names = [entry.name for entry in os.scandir(home) if entry.name.endswith(TOKEN_SUFFIX)]
    except OSError:
        names = []
    return _own([home / name for name in (AUTH_FILE, *sorted(names))], stat.S_ISREG)


def _own(paths: list[Path], kind) -> list[str]:
    found: list[str] = []
    for path in paths:
        try:
            info = os.lstat(path)
            parent = path.parent.resolve(strict=True)  # a mount covers the entry whatever path leads there
        except OSError:
            continue
        if kind(info.st_mode) and info.st_uid == os.getuid():
            found.append(str(parent / path.name))
    return list(dict.fromkeys(found))

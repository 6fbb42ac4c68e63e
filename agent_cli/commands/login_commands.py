"""``/login`` (the set-up screen, in the TUI) and ``/logout`` (forget the stored keys)."""

from __future__ import annotations

import os

from agent_cli import events as ev
from agent_cli.auth.choice import forget_setup
from agent_cli.auth.keys import auth_path, remove_keys
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative


async def login_command(inv: Invocation) -> None:
    if inv.args:
        raise InputError("/login takes no arguments: it opens the set-up screen")
    inv.emit(ev.CommandAction("login"))


async def logout_command(inv: Invocation) -> None:
    if inv.args:
        raise InputError("/logout takes no arguments: it forgets every stored key")
    home = inv.session.config.agent_home
    removed = remove_keys(None, home)
    forget_setup(home)
    lines = [
        f"removed {', '.join(removed)} from {home_relative(auth_path(home))}" if removed else "no stored key to remove"
    ]
    still = [name for name in removed if os.environ.get(name, "").strip()]
    if still:
        lines.append(f"{', '.join(still)} is still set in the environment, and the agent uses it")
    lines.append("this session keeps its connection until it ends; /login sets up another provider")
    inv.emit(ev.Notice("\n".join(lines), title="logout"))

"""``/plugins``: the plugins this session loaded and what each contributed."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.invocation import Invocation
from agent_cli.plugins.report import format_plugins


async def plugins_command(inv: Invocation) -> None:
    inv.emit(ev.Notice(format_plugins(inv.session.plugins, inv.table.aliases), title="plugins"))

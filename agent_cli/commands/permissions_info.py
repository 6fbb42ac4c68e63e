"""``/permissions``: the rules in force, where each is written, and which rule decided the last calls."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative
from agent_cli.network.session_network import SessionNetwork
from agent_cli.permissions.engine import Permissions
from agent_cli.trust.gate import TrustState

HOW_TO_ADD = (
    "no permission rules (write them in .claude/settings.json as Claude Code does, or in "
    '[permissions] of config.toml: allow = ["Bash(npm test:*)"], deny = ["Read(./.env)"])'
)


async def permissions_command(inv: Invocation) -> None:
    session = inv.session
    text = format_permissions(session.approvals.permissions, session.trust)
    if session.approvals.network is not None:
        text += "\n\n" + format_network(session.approvals.network)
    inv.emit(ev.Notice(text, title="permissions"))


def format_network(network: SessionNetwork) -> str:
    """The sandbox's network: the mode, the domains in force and where each is written, and the
    hosts commands were let through to or refused this session."""
    lines = [f"network: {network.summary()}"]
    lines += [f"  {line}" for line in network.entry_lines()]
    if decided := network.decision_lines():
        lines += ["hosts this session:", *(f"  {line}" for line in decided)]
    return "\n".join(lines)


def format_permissions(permissions: Permissions, trust: TrustState | None = None) -> str:
    lines: list[str] = []
    for kind in ("deny", "ask", "allow"):
        rules = [rule for rule in permissions.rules if rule.kind == kind]
        if rules:
            lines.append(f"{kind}:")
            for rule in rules:
                where = home_relative(rule.source) if rule.source.startswith("/") else rule.source
                idle = "" if permissions.active(rule) else "  [not applied: the folder is not trusted]"
                lines.append(f"  {rule.text}  ({where}){idle}")
    text = "\n".join(lines) or HOW_TO_ADD
    if trust is not None and trust.inventory.items:
        state = "trusted" if trust.trusted else "not trusted"
        text += f"\n\nthis folder ({home_relative(trust.inventory.folder)}) is {state}"
    if permissions.recent:
        text += "\n\nlast decisions:"
        for tool, summary, verdict in permissions.recent:
            short = summary.splitlines()[0][:80] if summary else ""
            text += f"\n  {tool} {short}: {verdict.describe()}"
    if permissions.warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in permissions.warnings)
    return text

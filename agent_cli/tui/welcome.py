"""The welcome banner's notes: what runs without asking (a Claude Code user expects a question
for every command), and the way to an AGENTS.md when the repository has none."""

from __future__ import annotations

from agent_cli.config import Config
from agent_cli.context.project_doc import discover_project_docs

NETWORK_NOTES = {"all": "network on", "allow-list": "network to allowed domains only", "off": "no network"}


def welcome_notes(config: Config, network: str) -> list[str]:
    """``network``: what sandboxed commands reach (network/session_network.py's mode)."""
    notes = [approval_note(config.sandbox_mode, config.approval_policy, network)]
    found = discover_project_docs(config.cwd, None, config.project_doc_fallback_filenames)
    if not found.project_docs:
        notes.append("no AGENTS.md here: /init writes one from a look at the repository")
    return notes


def approval_note(sandbox: str, policy: str, network: str = "off") -> str:
    if policy == "untrusted":
        return "every command but known read-only ones asks first"
    if sandbox == "danger-full-access":
        return "no sandbox: commands run with your permissions" + (" without asking" if policy == "never" else "")
    where = "read-only" if sandbox == "read-only" else "writes here only"
    tail = "nothing asks" if policy == "never" else "others ask first"
    return f"sandboxed commands run without asking ({where}, {NETWORK_NOTES.get(network, network)}); {tail}"

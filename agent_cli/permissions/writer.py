"""Saving an allow rule the user chose in the approval modal ("Yes, and don't ask again").

The rule goes to the project's ``.agent/config.toml`` (``[permissions] allow``; tomlkit keeps the
file's comments and layout) or to Claude Code's ``.claude/settings.local.json`` (the JSON keeps its
indentation and key order). Which one is remembered in ``$AGENT_HOME/permissions.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

DESTINATIONS = {"agent": (".agent", "config.toml"), "claude": (".claude", "settings.local.json")}
CHOICE_FILE = "permissions.json"


def rule_file(destination: str, root: Path) -> Path:
    return root.joinpath(*DESTINATIONS[destination])


def remembered_destination(agent_home: Path) -> str | None:
    try:
        value = json.loads((agent_home / CHOICE_FILE).read_text(encoding="utf-8")).get("save_rules_to")
    except (OSError, ValueError, AttributeError):
        return None
    return value if value in DESTINATIONS else None


def remember_destination(agent_home: Path, destination: str) -> None:
    agent_home.mkdir(parents=True, exist_ok=True)
    (agent_home / CHOICE_FILE).write_text(json.dumps({"save_rules_to": destination}) + "\n", encoding="utf-8")


def save_allow_rule(rule: str, destination: str, root: Path) -> Path:
    """Append ``rule`` to the allow list of the destination file (created if missing); returns it."""
    path = rule_file(destination, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    if destination == "agent":
        _save_toml(path, rule)
    else:
        _save_json(path, rule)
    return path


def _save_toml(path: Path, rule: str) -> None:
    import tomlkit

    document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.is_file() else tomlkit.document()
    table = document.get("permissions")
    if table is None:
        table = tomlkit.table()
        document["permissions"] = table
    allow = table.get("allow")
    if allow is None:
        table["allow"] = tomlkit.array()
        allow = table["allow"]
    if rule not in allow:
        allow.append(rule)
    path.write_text(tomlkit.dumps(document), encoding="utf-8")


def _save_json(path: Path, rule: str) -> None:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    data = json.loads(text) if text.strip() else {}
    indent_match = re.search(r"\n([ \t]+)\S", text)
    indent = indent_match.group(1) if indent_match else 2
    allow = data.setdefault("permissions", {}).setdefault("allow", [])
    if rule not in allow:
        allow.append(rule)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")

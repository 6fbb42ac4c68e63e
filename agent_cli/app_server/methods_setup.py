"""What a client asks before it shows its composer: ``initialize``, ``account/read``,
``model/list``, ``config/read``, ``configRequirements/read``, ``hooks/list``, ``skills/list``,
``collaborationMode/list``, ``plugin/installed`` and the like. Codex's TUI exits when one of the
first ones fails, so each answers something true and schema-valid even where we have little to say."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

from agent_cli import __version__
from agent_cli.app_server import rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.dispatch import Method
from agent_cli.app_server.sessions import CODEX_APPROVAL, SessionDoor, Settings

MODES = [  # Codex's collaboration modes, and ours they stand for: default -> agent, plan -> plan
    {"name": "Plan", "mode": "plan", "model": None, "reasoning_effort": None},
    {"name": "Default", "mode": "default", "model": None, "reasoning_effort": None},
]


def setup_methods(door: SessionDoor) -> dict[str, Method]:
    async def initialize(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        if connection.initialized:
            raise rpc.invalid_request("Already initialized")
        client = params.get("clientInfo") or {}
        connection.client_name = str(client.get("name", "")) if isinstance(client, dict) else ""
        capabilities = params.get("capabilities") or {}
        opted_out = capabilities.get("optOutNotificationMethods") if isinstance(capabilities, dict) else None
        connection.opted_out = frozenset(m for m in opted_out or [] if isinstance(m, str))
        connection.initialized = True
        name = connection.client_name or "client"
        return {
            # No "name/version" token: Codex's TUI would compare that version with its own and warn
            "userAgent": f"agent-cli (version {__version__}; {platform.system()} {platform.release()}; {platform.machine()}) {name}",
            "codexHome": str(door.home),
            "platformFamily": "windows" if sys.platform == "win32" else "unix",
            "platformOs": {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform),
        }

    async def account_read(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"account": None, "requiresOpenaiAuth": False}  # our providers' keys are the server's business

    async def model_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        config = door.config(Settings(), check_key=False)
        return {"data": [model_entry(config.model, True)], "nextCursor": None}

    async def config_read(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        config = door.config(Settings(cwd=Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else None), False)
        return {
            "config": {
                "model": config.model,
                "model_provider": config.provider.id,
                "approval_policy": CODEX_APPROVAL.get(config.approval_policy, "on-request"),
                "sandbox_mode": config.sandbox_mode,
            },
            "origins": {},
        }

    async def config_requirements_read(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"requirements": None}

    async def hooks_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"data": [{"cwd": cwd, "hooks": [], "warnings": [], "errors": []} for cwd in cwds(params, door)]}

    async def skills_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        data = []
        for cwd in cwds(params, door):
            skills = door.skills(Path(cwd)) if Path(cwd).is_dir() else []
            data.append({"cwd": cwd, "skills": [skill_entry(skill) for skill in skills], "errors": []})
        return {"data": data}

    async def collaboration_modes(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"data": MODES}

    async def plugins_installed(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"marketplaces": [], "marketplaceLoadErrors": []}

    return {
        "initialize": initialize,
        "account/read": account_read,
        "model/list": model_list,
        "config/read": config_read,
        "configRequirements/read": config_requirements_read,
        "hooks/list": hooks_list,
        "skills/list": skills_list,
        "collaborationMode/list": collaboration_modes,
        "plugin/installed": plugins_installed,
    }


def cwds(params: dict[str, Any], door: SessionDoor) -> list[str]:
    given = params.get("cwds")
    return [str(cwd) for cwd in given if isinstance(cwd, str)] if isinstance(given, list) and given else [str(door.cwd)]


def model_entry(model: str, default: bool) -> dict[str, Any]:
    return {
        "id": model,
        "model": model,
        "displayName": model,
        "description": "the model agent-cli is configured with",
        "hidden": False,
        "supportedReasoningEfforts": [],
        "defaultReasoningEffort": "medium",
        "isDefault": default,
    }


def skill_entry(skill: Any) -> dict[str, Any]:
    scope = {"repo": "repo", "user": "user"}.get(skill.source, "system")
    return {
        "name": skill.name,
        "description": skill.description,
        "enabled": True,
        "path": str(skill.path),
        "scope": scope,
    }

"""Codex's ``Thread`` object and the thread settings that answer ``thread/start``,
``thread/resume`` and ``thread/fork``, from what our sessions and session files hold."""

from __future__ import annotations

from typing import Any

from agent_cli import __version__
from agent_cli.app_server.sessions import CODEX_APPROVAL, Stored

SOURCE = "cli"  # an interactive session, as Codex's TUI lists them


def thread_shape(
    *,
    thread_id: str,
    cwd: str,
    provider: str,
    model: str | None,
    created: int,
    updated: int,
    preview: str,
    status: dict[str, Any],
    path: str | None,
    name: str | None = None,
    turns: list[dict[str, Any]] | None = None,
    ephemeral: bool = False,
    forked_from: str | None = None,
) -> dict[str, Any]:
    return {
        "id": thread_id,
        "sessionId": thread_id,
        "forkedFromId": forked_from,
        "preview": preview,
        "ephemeral": ephemeral,
        "modelProvider": provider,
        "model": model,
        "createdAt": created,
        "updatedAt": updated,
        "recencyAt": updated,
        "status": status,
        "path": path,
        "cwd": cwd,
        "cliVersion": __version__,
        "source": SOURCE,
        "projectId": None,
        "name": name,
        "gitInfo": None,
        "historyMode": "legacy",
        "turns": turns or [],
    }


def stored_thread(stored: Stored, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return thread_shape(
        thread_id=stored.id,
        cwd=stored.cwd,
        provider=stored.provider,
        model=stored.model or None,
        created=stored.created,
        updated=stored.updated,
        preview=stored.preview,
        status=status or {"type": "notLoaded"},
        path=str(stored.path),
        name=stored.name,
    )


def sandbox_shape(described: dict[str, Any]) -> dict[str, Any]:
    mode = described["sandbox"]
    if mode == "read-only":
        return {"type": "readOnly", "networkAccess": described["network"]}
    if mode == "workspace-write":
        return {
            "type": "workspaceWrite",
            "writableRoots": described["writable_roots"],
            "networkAccess": described["network"],
        }
    return {"type": "dangerFullAccess"}


def thread_settings(described: dict[str, Any], thread: dict[str, Any]) -> dict[str, Any]:
    """The answer to thread/start, thread/resume and thread/fork: the thread and what it runs with."""
    return {
        "thread": thread,
        "model": described["model"],
        "modelProvider": described["provider"],
        "cwd": described["cwd"],
        "approvalPolicy": CODEX_APPROVAL[described["approval"]],
        "approvalsReviewer": "user",
        "sandbox": sandbox_shape(described),
        "reasoningEffort": None,
    }

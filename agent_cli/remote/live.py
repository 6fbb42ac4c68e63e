"""The sessions a host holds now, as `agent sessions` and `agent attach`'s picker show them
(running, waiting for approval, idle), and ending one (`agent sessions stop`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_cli.app_server.client import AppServerClient

STOP = "agent/thread/stop"  # ours, beside Codex's methods (app_server/methods_threads.py)


@dataclass(frozen=True, slots=True)
class LiveSession:
    id: str
    cwd: str
    state: str  # "running", "waiting for approval" or "idle"
    preview: str
    name: str | None
    updated: int  # epoch seconds
    model: str
    path: str  # its session file

    @property
    def short_id(self) -> str:
        """As `agent sessions` names a session: the random part of its id (from its file's name)."""
        stem = self.path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        return stem.rsplit("-", 1)[-1] if stem else self.id[:8]


def state_of(status: dict[str, Any]) -> str:
    if status.get("type") != "active":
        return "idle"
    return "waiting for approval" if "waitingOnApproval" in (status.get("activeFlags") or []) else "running"


async def live_sessions(client: AppServerClient) -> list[LiveSession]:
    """The host's loaded sessions, most recently active first."""
    ids = (await client.request("thread/loaded/list", {}))["data"]
    found = []
    for thread_id in ids:
        thread = (await client.request("thread/read", {"threadId": thread_id}))["thread"]
        found.append(
            LiveSession(
                id=str(thread["id"]),
                cwd=str(thread.get("cwd") or ""),
                state=state_of(thread.get("status") or {}),
                preview=str(thread.get("preview") or ""),
                name=thread.get("name"),
                updated=int(thread.get("updatedAt") or 0),
                model=str(thread.get("model") or ""),
                path=str(thread.get("path") or ""),
            )
        )
    return sorted(found, key=lambda live: live.updated, reverse=True)


async def stop(client: AppServerClient, thread_id: str) -> None:
    await client.request(STOP, {"threadId": thread_id}, timeout=60)

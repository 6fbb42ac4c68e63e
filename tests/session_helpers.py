"""Helpers for tests that drive an in-process Session against tests/fake_server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from agent_cli.session import Session
from tests.conftest import provider_env
from tests.fake_server import FakeModelServer


def make_session(
    server: FakeModelServer,
    repo: Path,
    monkeypatch,
    *overrides: str,
    provider: str = "openai-chat",
    model: str = "test-model",
    interactive: bool = False,
    trust: bool = True,
) -> Session:
    """A Session working in ``repo`` that talks to ``server``; ``overrides`` are `-c key=value` settings.

    A failed request is not retried, so a scripted error shows at once. ``trust`` runs the
    repository's own hooks and servers (as ``agent exec --trust``); trust tests pass False."""
    for name, value in provider_env(server, provider).items():
        monkeypatch.setenv(name, value)
    config = load_config(repo, [f'model_provider="{provider}"', f'model="{model}"', "retry_max_attempts=1", *overrides])
    return open_session(replace(config, trust_repository=trust), interactive=interactive)


async def collect_events(session: Session, text: str, answer: str = "deny") -> list[ev.Event]:
    """Submit ``text`` as the user would and return every event; approval requests get ``answer``."""
    events = []
    async for event in submit(session, text):
        events.append(event)
        if isinstance(event, ev.ApprovalRequest):
            event.future.set_result(ev.ApprovalDecision(answer))
    return events

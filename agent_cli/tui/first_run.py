"""`agent` with no usable provider: the set-up screen in a terminal instead of an error (the
error stays for pipes and scripts, which `agent login` serves)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App

from agent_cli.auth.choice import Choice
from agent_cli.config import Config, ConfigError, load_config
from agent_cli.models.key_check import LOCAL_SERVERS, LocalServer
from agent_cli.models.registry import missing_key
from agent_cli.tui.screens.setup import SetupScreen
from agent_cli.tui.session_switching import new_session


def set_up_if_needed(args: argparse.Namespace, config: Config, load: Callable[[argparse.Namespace], Config]) -> Config:
    """``config`` when its provider has a key; else, in a terminal, the config after set-up."""
    problem = missing_key(config.provider)
    if problem is None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return config
    reason = f"No key for {config.provider.name or config.provider.id} ({config.provider.env_key} is not set)."
    if run_setup(config.agent_home, reason + " Choose where the model runs:") is None:
        raise SystemExit("agent: error: set-up left without choosing a provider; run `agent` again, or `agent login`")
    if getattr(args, "provider", None) or getattr(args, "model", None):
        args.provider = args.model = None  # the set-up's choice, not the flag that had no key
    return load(args)


class SetupApp(App[Choice | None]):
    """The set-up screen on its own, before any session exists."""

    def __init__(self, home: Path, reason: str, servers: tuple[LocalServer, ...] = LOCAL_SERVERS) -> None:
        super().__init__()
        self.home, self.reason, self.servers = home, reason, servers

    def on_mount(self) -> None:
        self.push_screen(SetupScreen(self.home, self.reason, self.servers), callback=self.exit)


def run_setup(home: Path, reason: str) -> Choice | None:
    return SetupApp(home, reason).run()


async def log_in(app: Any) -> None:
    """``/login`` in the app: the set-up screen, then a new session on what was chosen."""
    app.activity.stop()  # no "working" spinner under the set-up screen
    choice = await app.push_screen_wait(SetupScreen(app.config.agent_home, "Choose where the model runs:"))
    if choice is None:
        await app.renderer.notice("set-up left; nothing changed", "info", "login")
        return
    try:
        config = config_after_setup(app.config)
    except ConfigError as exc:
        await app.renderer.notice(f"configuration error: {exc}", "error", "login")
        return
    if (problem := missing_key(config.provider)) is not None:
        await app.renderer.notice(problem, "error", "login")
        return
    new_session(app, app.session_factory, config, f"new session: now using {config.model} via {config.provider.id}")


def config_after_setup(config: Config) -> Config:
    """``config`` loaded again with the same ``-c`` overrides and flags, but the model and provider
    the set-up saved (a flag's provider, which had no key, gives way)."""
    overrides = [layer.origin.removeprefix("-c ") for layer in config.layers if layer.kind == "override"]
    flags = {
        key: value
        for layer in config.layers
        if layer.kind == "flags"
        for key, value in layer.table.items()
        if key not in ("model", "model_provider")
    }
    loaded = load_config(config.cwd, overrides, flags)
    return replace(loaded, plugin_dirs=config.plugin_dirs, trust_repository=config.trust_repository)

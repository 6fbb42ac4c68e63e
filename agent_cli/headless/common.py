"""What every front end does before a session starts: loading the config (with the shared options
of arguments.py), checking the API key, and failing with one line and exit code 2.

cli.py, `agent exec`, `agent resume` and `agent sessions` all use these, so they live here and
nothing has to import cli.py back.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from agent_cli.arguments import session_flags
from agent_cli.config import ConfigError, load_config
from agent_cli.models.registry import missing_key
from agent_cli.terminal_text import terminal_safe
from agent_cli.trust.gate import provider_in_force

USAGE_ERROR = 2


def load_config_or_exit(args: argparse.Namespace):
    """Load config for a front end; print a one-line error and exit 2 when it is bad."""
    try:
        cwd = Path(args.cd).expanduser() if args.cd else None
        config = load_config(cwd, args.overrides, session_flags(args))
    except ConfigError as exc:
        fail(f"configuration error: {exc}")
    return replace(
        config,
        plugin_dirs=tuple(Path(folder).expanduser().resolve() for folder in getattr(args, "plugin_dirs", [])),
        trust_repository=bool(getattr(args, "trust", False)),  # agent exec --trust
    )


def check_api_key_or_exit(config) -> None:
    if (problem := missing_key(provider_in_force(config))) is not None:
        fail(problem)


def fail(message: str) -> NoReturn:
    print(f"agent: error: {terminal_safe(message)}", file=sys.stderr)
    raise SystemExit(USAGE_ERROR)

"""The session options of `agent` (``-m``, ``--provider``, ``-a``, ``-s``, ``--mode``) as a host
takes them: ``thread/start``'s model, modelProvider, approvalPolicy and sandbox, and the mode as
the first ``turn/start``'s collaboration mode. What the protocol has no room for is refused with
the reason rather than dropped."""

from __future__ import annotations

import argparse
from typing import Any

from agent_cli.remote.conversation import CODEX_MODES


class OptionError(Exception):
    """An option a session in a host cannot take; the message says why and what to do."""


def thread_params(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "overrides", None):
        raise OptionError("-c is not carried to a host (the protocol has no room for our keys): put it in config.toml")
    if getattr(args, "plugin_dirs", None):
        raise OptionError("--plugin-dir is not carried to a host: the host loads the plugins its config names")
    params: dict[str, Any] = {}
    if args.model:
        params["model"] = args.model
    if args.provider:
        params["modelProvider"] = args.provider
    if getattr(args, "approval", None):
        params["approvalPolicy"] = "on-request" if args.approval == "on-failure" else args.approval
    if getattr(args, "sandbox", None):
        params["sandbox"] = args.sandbox
    return params


def first_mode(args: argparse.Namespace) -> str | None:
    """``--mode``, as the protocol has it (agent or plan); None when not given."""
    mode = getattr(args, "mode", None)
    if mode is not None and mode not in CODEX_MODES:
        raise OptionError(f"--mode {mode}: a session in a host runs in agent or plan mode (the protocol's modes)")
    return mode

"""`agent doctor`: the config files read, the provider and model (one real request, timed),
the keys found (never printed), the sandbox, trust of this folder, hooks, plugins, MCP servers
(started), language servers (not started) and the agent home's disk use. Exits 1 when something is broken."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from agent_cli.arguments import add_session_options, session_flags
from agent_cli.config import ConfigError, load_config
from agent_cli.doctor import checks
from agent_cli.doctor.checks import FAIL, Finding
from agent_cli.models.registry import missing_key
from agent_cli.paths import agent_home
from agent_cli.runtime import open_session
from agent_cli.terminal_text import terminal_safe


def build_doctor_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent doctor", description="Check the set-up: config, provider and model, keys, sandbox, MCP servers."
    )
    add_session_options(parser)
    parser.add_argument("--no-request", action="store_true", help="skip the request to the model")
    return parser


def run_doctor(argv: list[str], out: TextIO | None = None) -> int:
    args = build_doctor_parser().parse_args(argv)
    out = out or sys.stdout
    findings = asyncio.run(gather(args))
    width = max(len(finding.area) for finding in findings)
    for finding in findings:
        out.write(terminal_safe(f"{finding.status:<4}  {finding.area:<{width}}  {finding.text}") + "\n")
    broken = sum(finding.status == FAIL for finding in findings)
    out.write(f"\n{broken} problem(s) found\n" if broken else "\nnothing broken\n")
    return 1 if broken else 0


async def gather(args: argparse.Namespace) -> list[Finding]:
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    home = agent_home()
    findings = checks.config_files(cwd, home)
    try:
        config = load_config(cwd, args.overrides, session_flags(args))
    except ConfigError as exc:
        return [*findings, Finding("config", FAIL, str(exc)), checks.disk_use(home)]
    findings += checks.keys(config)
    if (problem := missing_key(config.provider)) is not None:
        findings.append(Finding("model", FAIL, problem))
    elif not args.no_request:
        findings.append(await checks.model_request(config))
    findings += checks.sandbox(config)
    findings.append(checks.trust(config))
    session = open_session(config, interactive=False)
    try:
        findings += await checks.session_parts(session)
        findings += checks.language_servers(session)
    finally:  # no prompt ran, so no SessionEnd hook runs either (SessionEnd only follows a SessionStart)
        await session.aclose()
    findings.append(checks.disk_use(home))
    return findings

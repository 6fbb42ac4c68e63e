"""`agent login` and `agent logout`: store or forget a provider's API key (``auth.json`` under
the agent's home, mode 0600). In a script the key comes on stdin, as with Codex's
``printenv OPENAI_API_KEY | codex login --with-api-key``; in a terminal it is asked for without
echo. A key in the environment still wins over a stored one."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys

from agent_cli.auth.choice import DEFAULT_MODELS, SETUP_FILE, Choice, forget_setup, read_setup, write_setup
from agent_cli.auth.keys import auth_path, remove_keys, store_key
from agent_cli.display import home_relative
from agent_cli.headless.common import fail
from agent_cli.models.key_check import ANTHROPIC_URL, OPENAI_URL, check_models
from agent_cli.models.registry import BUILTIN_PROVIDERS, resolve_base_url
from agent_cli.paths import agent_home

LOGIN_PROVIDERS = ("openai", "anthropic", "openrouter", "azure")


def build_login_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent login",
        description="Store a provider's API key for the agent (readable by you only). "
        "A key in the environment wins over it.",
    )
    parser.add_argument("--provider", choices=LOGIN_PROVIDERS, default="openai", help="whose key (default openai)")
    parser.add_argument("--with-api-key", action="store_true", help="read the key from stdin")
    parser.add_argument("--no-check", action="store_true", help="store it without trying it")
    return parser


def build_logout_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent logout", description="Forget the stored API key(s).")
    parser.add_argument("--provider", choices=LOGIN_PROVIDERS, help="only this provider's key (default: all)")
    return parser


def run_login(argv: list[str]) -> int:
    args = build_login_parser().parse_args(argv)
    provider = BUILTIN_PROVIDERS[args.provider]
    if args.with_api_key or not sys.stdin.isatty():
        key = sys.stdin.read().strip()
    else:
        key = getpass.getpass(f"Paste your {provider.name} API key (not shown): ").strip()
    if not key:
        fail("no key given (pipe it in: printenv OPENAI_API_KEY | agent login --with-api-key)")
    if not args.no_check and provider.wire_api in ("responses", "anthropic") and provider.kind == "default":
        default = ANTHROPIC_URL if provider.wire_api == "anthropic" else OPENAI_URL
        check = asyncio.run(check_models(resolve_base_url(provider) or default, key, provider.wire_api))
        if not check.ok:
            print(f"agent: {provider.name} did not accept the key: {check.message}; nothing stored", file=sys.stderr)
            return 1
    home = agent_home()
    path = store_key(provider.env_key or "", key, home)
    if provider.id in DEFAULT_MODELS:
        write_setup(home, Choice(provider.id, DEFAULT_MODELS[provider.id]))
    print(f"stored the {provider.name} key in {home_relative(path)} (readable by you only)")
    if os.environ.get(provider.env_key or "", "").strip():
        print(f"note: {provider.env_key} is set in this environment and wins over the stored key")
    return 0


def run_logout(argv: list[str]) -> int:
    args = build_logout_parser().parse_args(argv)
    home = agent_home()
    env_key = BUILTIN_PROVIDERS[args.provider].env_key if args.provider else None
    saved = read_setup(home) if args.provider is None else None
    removed = remove_keys(env_key, home)
    if saved is not None and forget_setup(home):
        where = f" at {saved.providers[saved.provider].get('base_url')}" if saved.provider in saved.providers else ""
        print(
            f"forgot the set-up choice: {saved.model} via {saved.provider}{where} ({home_relative(home / SETUP_FILE)})"
        )
    if removed:
        print(f"removed the stored {', '.join(removed)} from {home_relative(auth_path(home))}")
    elif saved is None:
        print("no stored key or set-up choice to remove")
    else:
        print("no stored key to remove")
    still = [name for name in (removed or ([env_key] if env_key else [])) if os.environ.get(name, "").strip()]
    if still:
        print(f"note: {', '.join(still)} is still set in the environment, and the agent uses it")
    return 0

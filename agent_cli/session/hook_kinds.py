"""The hook types besides ``command``, as Claude Code defines them; each ends as a
:class:`~agent_cli.hooks.run.HookRun` that ``hooks.py`` reads like a command's.

- ``http``: the event's JSON is POSTed to ``url`` (``headers`` may use ``$VAR`` / ``${VAR}`` of the
  variables listed in ``allowedEnvVars``, others become empty). A 2xx answer's body is read as a
  command's stdout (empty: nothing to say); another status or no connection is an error shown to
  the user that blocks nothing. The address is checked as ``web_fetch`` checks it: private,
  link-local and metadata addresses are refused, this machine's loopback is allowed (Claude Code
  allows it too: a local policy server is what http hooks are for), redirects are not followed,
  and the request goes to the address that was checked.
- ``prompt``: a small model call (``model``, default the session's) reads the user's ``prompt``
  with the event's JSON (in place of ``$ARGUMENTS``, else after it) and answers
  ``{"ok": bool, "reason": ...}``; not ok blocks as ``decision: "block"`` does, and for
  PermissionRequest ok allows.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agent_cli.context.prompts import prompt_library
from agent_cli.hooks.run import HookRun
from agent_cli.hooks.spec import HookSpec
from agent_cli.items import Message, user
from agent_cli.models import base as stream
from agent_cli.models.base import Prompt
from agent_cli.models.errors import ModelError
from agent_cli.session.clients import ModelClients
from agent_cli.session.meter import ContextMeter
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolError
from agent_cli.tools.web_fetch import check_url, resolve_public

BODY_LIMIT = 64 * 1024  # bytes of an http hook's answer that are read
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def header_values(spec: HookSpec, env: Mapping[str, str]) -> dict[str, str]:
    """The hook's headers with ``$VAR`` filled from the variables it lists, others emptied."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in spec.allowed_env_vars else ""

    return {name: _VARIABLE.sub(fill, value) for name, value in spec.headers}


async def post(spec: HookSpec, payload: dict[str, Any], env: Mapping[str, str] | None = None) -> HookRun:
    """An http hook: POST ``payload`` to the checked address of ``spec.command`` (the URL)."""
    import httpx2  # with the first http hook, not at start-up

    url = spec.command
    try:
        scheme, host, port = check_url(url)
        address = await resolve_public(host, port, allow_private=False, allow_loopback=True)
    except ToolError as exc:
        return HookRun(spec, None, error=str(exc))
    headers = {"Content-Type": "application/json", **header_values(spec, os.environ if env is None else env)}
    parts = urlsplit(url)
    literal = f"[{address}]" if ":" in address else address
    headers["Host"] = host if parts.port is None else f"{host}:{parts.port}"
    target = parts._replace(netloc=f"{literal}:{port}").geturl()
    extensions = {"sni_hostname": host} if scheme == "https" else {}
    try:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=spec.timeout, trust_env=False) as client:
            request = client.build_request(
                "POST", target, content=json.dumps(payload).encode("utf-8"), headers=headers, extensions=extensions
            )
            async with asyncio.timeout(spec.timeout):
                response = await client.send(request, stream=True)
                try:
                    data = bytearray()
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) >= BODY_LIMIT:  # a longer answer is cut, not read on
                            break
                finally:
                    await response.aclose()
    except TimeoutError:
        return HookRun(spec, None, timed_out=True)
    except httpx2.HTTPError as exc:
        return HookRun(spec, None, error=f"cannot reach {url}: {exc}")
    body = bytes(data[:BODY_LIMIT]).decode("utf-8", "replace")
    if not 200 <= response.status_code < 300:
        return HookRun(spec, 1, stderr=f"HTTP {response.status_code} {body.strip()[:500]}".strip())
    return HookRun(spec, 0, stdout=body)


def prompt_text(spec: HookSpec, payload: dict[str, Any]) -> str:
    arguments = json.dumps(payload, indent=2)
    if "$ARGUMENTS" in spec.command:
        return spec.command.replace("$ARGUMENTS", arguments)
    return f"{spec.command}\n\n{arguments}"


async def ask_model(
    turn: TurnContext, meter: ContextMeter, clients: ModelClients, spec: HookSpec, payload: dict[str, Any]
) -> HookRun:
    """A prompt hook: one request without tools; its ``{"ok", "reason"}`` as a command's JSON reply.
    Its tokens count in the session's totals (``meter``)."""
    model = spec.model or turn.model
    own = clients.current()
    client = own if model == turn.model else clients.factory(model)
    instructions = prompt_library(turn.config.agent_home).render("hook_prompt.md").strip()
    prompt = Prompt(instructions, [user(prompt_text(spec, payload))])
    texts: list[str] = []
    try:
        async with asyncio.timeout(spec.timeout):
            async for event in client.stream(prompt):
                if isinstance(event, stream.OutputItem) and isinstance(event.item, Message):
                    texts.append(event.item.text)
                elif isinstance(event, stream.Completed) and event.usage is not None:
                    meter.count_usage(event.usage)
    except TimeoutError:
        return HookRun(spec, None, timed_out=True)
    except ModelError as exc:
        return HookRun(spec, None, error=f"the model did not answer: {exc}")
    finally:
        if client is not own:
            await client.aclose()
    return verdict_run(spec, "".join(texts))


def verdict_run(spec: HookSpec, text: str) -> HookRun:
    """The model's answer as a command hook's JSON reply."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        verdict = json.loads(match.group(0)) if match else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("ok", verdict.get("decision")), (bool, str)):
        return HookRun(spec, 1, stderr=f"the model's answer is not {{ok, reason}}: {text.strip()[:300]!r}")
    ok = verdict.get("ok", verdict.get("decision") in ("approve", "allow"))
    reason = verdict.get("reason") if isinstance(verdict.get("reason"), str) else ""
    if spec.event == "PermissionRequest":
        behavior = {"behavior": "allow"} if ok else {"behavior": "deny", "message": reason}
        reply: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": spec.event, "decision": behavior}}
    elif ok:
        reply = {}
    else:
        reply = {"decision": "block", "reason": reason or "a prompt hook said no"}
    return HookRun(spec, 0, stdout=json.dumps(reply))

"""The hooks an SDK host registers in ``initialize``: each callback id becomes a hook of ours
that asks the host (``hook_callback``) instead of running a command, so its answer blocks, allows
or adds context exactly as a command hook's JSON would."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_cli.hooks.spec import DEFAULT_TIMEOUT, HOOK_EVENTS, HookSpec
from agent_cli.stream_json.channel import Channel


def hook_specs(table: Any, channel: Channel) -> list[HookSpec]:
    """``{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5}]}`` as
    our hooks; events we do not have are left out (the SDK docs list which)."""
    specs: list[HookSpec] = []
    if not isinstance(table, dict):
        return specs
    for event, matchers in table.items():
        if event not in HOOK_EVENTS or not isinstance(matchers, list):
            continue
        for matcher in matchers:
            if not isinstance(matcher, dict):
                continue
            pattern = matcher.get("matcher")
            if isinstance(pattern, str) and pattern not in ("", "*"):
                try:
                    re.compile(pattern)
                except re.error:
                    continue
            timeout = matcher.get("timeout")
            timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else DEFAULT_TIMEOUT
            for callback_id in matcher.get("hookCallbackIds") or []:
                specs.append(
                    HookSpec(
                        event,
                        f"SDK hook callback {callback_id}",
                        pattern if isinstance(pattern, str) and pattern else None,
                        timeout,
                        claude_names=True,  # the host matches and reads Claude's tool names: Bash, Read…
                        runner=_runner(channel, str(callback_id)),
                    )
                )
    return specs


def _runner(channel: Channel, callback_id: str):
    async def run(stdin: bytes) -> tuple[int, str, str]:
        fields = json.loads(stdin)
        answer = await channel.request(
            {
                "subtype": "hook_callback",
                "callback_id": callback_id,
                "input": fields,
                "tool_use_id": fields.get("tool_use_id"),
            }
        )
        return 0, json.dumps(answer), ""

    return run

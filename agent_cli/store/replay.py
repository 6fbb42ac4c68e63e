"""A saved session's history as the events that would have shown it, for a front end that
replays it (the TUI's transcript, ACP's session/load).

Only what the user would want to see again: what they typed, the answers, reasoning, and tool
calls with their results. Context fragments and developer messages are left out; a compaction
summary becomes a one-line notice.
"""

from __future__ import annotations

import re

from agent_cli import events as ev
from agent_cli.context.fragments import is_contextual_fragment, is_summary_message
from agent_cli.items import Item, Message, Reasoning, ToolCall, ToolOutput
from agent_cli.tools.patch_preview import patch_changes
from agent_cli.tools.registry import lenient_arguments  # what the live turn showed

MAX_REPLAYED_ITEMS = 200
COMPACTED_NOTE = "everything before this point was summarized to free context"
EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)
SHELL_RECORD = re.compile(
    r"^<user_shell_command>\n<command>(?P<command>.*?)</command>\n<result>\n(?P<output>.*)\n</result>\n</user_shell_command>$",
    re.DOTALL,
)


def shown_prompt(text: str) -> str:
    """A prompt as the user typed it: ``!git status`` for a shell command's record."""
    shell = SHELL_RECORD.match(text)
    return f"!{shell.group('command')}" if shell else text


def replay_events(items: list[Item], limit: int | None = MAX_REPLAYED_ITEMS) -> list[ev.Event]:
    """``limit``: the most recent items shown (None: all of them, for an export)."""
    shown = items[-limit:] if limit is not None else list(items)
    calls = {item.call_id: item for item in shown if isinstance(item, ToolCall)}
    events: list[ev.Event] = []
    if len(items) > len(shown):
        events.append(ev.Notice(f"{len(items) - len(shown)} earlier items are not shown", title="resume"))
    for item in shown:
        if isinstance(item, Message):
            if item.role == "assistant" and item.text.strip():
                events.append(ev.AgentMessage(item.text))
            elif item.role == "user" and is_summary_message(item.text):
                events.append(ev.Notice(COMPACTED_NOTE, title="compacted"))
            elif item.role == "user" and (shell := SHELL_RECORD.match(item.text)):  # a `!command` the user ran
                call_id = f"user-shell-{len(events)}"
                command, output = shell.group("command"), shell.group("output")
                code = EXIT_CODE.search(output)
                events.append(ev.ToolCallBegin(call_id, "shell", {"command": command}))
                events.append(
                    ev.ToolCallEnd(
                        call_id,
                        "shell",
                        {"command": command},
                        output,
                        code is None or code.group(1) == "0",
                        0.0,
                        int(code.group(1)) if code else None,
                    )
                )
            elif item.role == "user" and not is_contextual_fragment(item.text):
                events.append(ev.UserMessage(item.text, item.typed, tuple(image.name for image in item.images)))
        elif isinstance(item, Reasoning) and item.text.strip():
            events.append(ev.ReasoningDone(item.text))
        elif isinstance(item, ToolCall):
            events.append(ev.ToolCallBegin(item.call_id, item.name, lenient_arguments(item.arguments)))
        elif isinstance(item, ToolOutput) and (call := calls.get(item.call_id)):
            code = EXIT_CODE.search(item.output)
            arguments = lenient_arguments(call.arguments)
            changes = patch_changes(str(arguments.get("patch", ""))) if call.name == "apply_patch" else ()
            events.append(
                ev.ToolCallEnd(
                    item.call_id,
                    call.name,
                    arguments,
                    item.output,
                    item.success,
                    0.0,
                    int(code.group(1)) if code else None,
                    changes,
                )
            )
    return events

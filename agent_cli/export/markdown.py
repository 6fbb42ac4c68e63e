"""A conversation as Markdown: the prompts, the answers, and each tool call with its output folded
in ``<details>`` (a patch as a diff), from the same events a resumed session replays
(:func:`agent_cli.store.replay.replay_events`), so the export shows what the transcript shows.

``/export`` (commands/) and ``agent sessions export`` (headless/) both write what this returns, so a
session exported either way reads the same. Text is written as it was; code blocks use a fence
longer than any run of backticks in what they hold, so nothing inside can close them.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agent_cli import events as ev
from agent_cli.items import Item
from agent_cli.store.replay import replay_events

SUMMARY_CHARS = 80


@dataclass(frozen=True, slots=True)
class ExportHeader:
    session_id: str
    model: str
    cwd: str
    created: str


def conversation_markdown(items: Iterable[Item], header: ExportHeader) -> str:
    parts = [
        f"# Conversation {header.session_id}",
        "",
        f"- Model: {header.model}",
        f"- Directory: {header.cwd}",
        f"- Started: {header.created}",
    ]
    calls: dict[str, ev.ToolCallBegin] = {}
    for event in replay_events(list(items), limit=None):
        match event:
            case ev.UserMessage(text=text, typed=typed, images=images):
                parts += ["", "## You", "", (typed or text).strip()]
                parts += [f"\n*[image: {name}]*" for name in images]  # the picture itself is not exported
            case ev.AgentMessage(text=text):
                parts += ["", "## Agent", "", text.strip()]
            case ev.ReasoningDone(text=text):
                parts += ["", folded("Reasoning", fenced(text.strip(), ""))]
            case ev.Notice(text=text):
                parts += ["", f"> {text}"]
            case ev.ToolCallBegin():
                calls[event.call_id] = event
            case ev.ToolCallEnd():
                calls.pop(event.call_id, None)
                parts += ["", tool_markdown(event)]
    for begin in calls.values():  # a call the session ended before it answered
        parts += ["", folded(f"{begin.name}: {call_title(begin.name, begin.arguments)} (no result)", "")]
    return "\n".join(parts).rstrip() + "\n"


def tool_markdown(end: ev.ToolCallEnd) -> str:
    status = "ok" if end.success else "failed"
    if end.exit_code is not None:
        status = f"exit {end.exit_code}"
    body = []
    if end.changes:
        for change in end.changes:
            target = change.path + (f" → {change.move_to}" if change.move_to else "")
            body += [f"**{change.kind}** `{target}`", "", fenced(change.diff.rstrip("\n"), "diff"), ""]
    else:
        body += [fenced(arguments_text(end.name, end.arguments), "json" if end.name != "shell" else "sh"), ""]
    body += ["Output:", "", fenced(end.output.rstrip("\n"), "")]
    return folded(f"{end.name}: {call_title(end.name, end.arguments)} ({status})", "\n".join(body))


def call_title(name: str, arguments: dict) -> str:
    """One line naming the call: the command, the path, the URL..."""
    for key in ("command", "path", "url", "pattern", "description", "query"):
        if isinstance(arguments.get(key), str) and arguments[key].strip():
            line = " ".join(arguments[key].split())
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
    if name == "apply_patch":
        return "patch"
    return ""


def arguments_text(name: str, arguments: dict) -> str:
    if name == "shell" and isinstance(arguments.get("command"), str):
        return arguments["command"]
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def folded(summary: str, body: str) -> str:
    """A ``<details>`` block; the summary is HTML-escaped (it is HTML), the body is Markdown."""
    return f"<details>\n<summary>{html.escape(summary)}</summary>\n\n{body.rstrip()}\n\n</details>"


def fenced(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"

"""One tool call: what ran, whether it is running or finished, and a preview of its output.

The preview is the first and last lines; Enter or a click expands the whole output. apply_patch
shows its changes as a coloured diff. The cell is a single widget (header, output and diff are
one piece of content) so that many tool calls stay cheap to lay out.
"""

from __future__ import annotations

import json
from typing import Any

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from agent_cli.display import command_output, command_preview
from agent_cli.events import ToolCallEnd
from agent_cli.mcp.names import split_name
from agent_cli.tui.formatting import duration, one_line, preview_lines
from agent_cli.tui.widgets.diff_view import render_diff

REFRESH_SECONDS = 0.1
EXPANDED_MAX_LINES = 2000
DIFF_PREVIEW_LINES = 40


def describe_call(name: str, args: dict[str, Any]) -> str:
    """A one-line description of the call: the command for shell, the path for file tools."""
    if name == "shell":
        command = args.get("command", "")
        return command_preview(" ".join(map(str, command)) if isinstance(command, list) else str(command))
    if name == "apply_patch":
        return ""
    for key in ("path", "pattern", "file_path", "dir"):
        if key in args:
            rest = {k: v for k, v in args.items() if k != key}
            extra = " " + json.dumps(rest, ensure_ascii=False) if rest else ""
            return f"{args[key]}{extra}"
    return json.dumps(args, ensure_ascii=False) if args else ""


class ToolCell(Static, can_focus=True):
    DEFAULT_CSS = """
    ToolCell { height: auto; margin: 0 0 1 0; padding: 0 1; border-left: outer $panel; }
    ToolCell:focus { border-left: outer $accent; background: $boost; }
    ToolCell.-running { border-left: outer $warning; }
    ToolCell.-failed { border-left: outer $error; }
    """

    expanded: reactive[bool] = reactive(False)

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        super().__init__(classes="-running")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.live: list[str] = []
        self.result: ToolCallEnd | None = None
        self._scheduled = False

    def on_mount(self) -> None:
        self._refresh_view()

    @property
    def running(self) -> bool:
        return self.result is None

    @property
    def output_text(self) -> str:
        if self.live:
            return "".join(self.live)
        return command_output(self.result.output) if self.result else ""

    @property
    def diff(self) -> str:
        if self.result is None:
            return ""
        return "\n".join(change.diff for change in self.result.changes if change.diff)

    def append_output(self, text: str) -> None:
        self.live.append(text)
        if not self._scheduled:  # coalesce a flood of output into one repaint per tick
            self._scheduled = True
            self.set_timer(REFRESH_SECONDS, self._refresh_view)

    def finish(self, event: ToolCallEnd) -> None:
        self.result = event
        self.arguments = event.arguments or self.arguments
        self.remove_class("-running")
        self.set_class(not event.success, "-failed")
        self._refresh_view()

    # --- rendering ----------------------------------------------------------------------

    def _refresh_view(self) -> None:
        self._scheduled = False
        parts = [self._header_content()]
        diff = self.diff
        output = self.output_text  # joined once per repaint: streamed output can be long
        if diff and self.result is not None and self.result.success:
            parts.append(render_diff(diff, None if self.expanded else DIFF_PREVIEW_LINES))
        elif output.strip():
            parts.append(self._output_content(output))
        self.update(Content("\n").join(parts))

    def _header_content(self) -> Content:
        description = one_line(describe_call(self.tool_name, self.arguments), 200)
        if self.tool_name == "apply_patch" and self.result and self.result.changes:
            description = ", ".join(
                f"{c.kind} {c.path}" + (f" → {c.move_to}" if c.move_to else "") for c in self.result.changes
            )
        parts: list[str | tuple[str, str]] = []
        if self.result is None:
            parts.append(("● ", "$text-warning"))
        elif self.result.success:
            parts.append(("✓ ", "$text-success"))
        else:
            parts.append(("✗ ", "$text-error"))
        mcp = split_name(self.tool_name)
        parts.append((f"{mcp[0]}.{mcp[1]}" if mcp else self.tool_name, "bold"))  # an MCP tool: server.tool
        if description:
            parts += ["  ", (description, "$text-accent" if self.tool_name == "shell" else "")]
        if self.result is None:
            parts.append(("  running…", "italic $text-muted"))
        else:
            facts = [f"exit {self.result.exit_code}"] if self.result.exit_code is not None else []
            if self.result.duration:
                facts.append(duration(self.result.duration))
            if facts:
                parts.append(("  " + " · ".join(facts), "$text-muted"))
        return Content.assemble(*parts)

    def _output_content(self, output: str) -> Content:
        lines = output.rstrip("\n").splitlines()
        note: str | None = None
        if self.expanded:
            if len(lines) > EXPANDED_MAX_LINES:
                note = f"… {len(lines) - EXPANDED_MAX_LINES} earlier lines"
                lines = [note, *lines[-EXPANDED_MAX_LINES:]]
        else:
            head, hidden, tail = preview_lines("\n".join(lines))
            if hidden:
                note = f"… {hidden} more lines (enter or click to expand)"
            lines = [*head, note, *tail] if note else head
        parts: list[str | tuple[str, str]] = []
        for index, line in enumerate(lines):
            if index:
                parts.append("\n")
            parts.append(("  " + line, "italic $text-muted" if line is note else "$text-muted"))
        return Content.assemble(*parts)

    # --- expanding ----------------------------------------------------------------------

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._refresh_view()

    def on_click(self, event: events.Click) -> None:
        self.expanded = not self.expanded

    def on_key(self, event: events.Key) -> None:
        if event.key in ("enter", "space"):
            event.stop()
            self.expanded = not self.expanded


"""One tool call: what ran, whether it is running or finished, and a preview of its output.

The preview is the first and last lines; Enter or a click expands the whole output. While the
command runs the cell shows its live output, with a marker where output came too fast to show;
once it ends the cell shows the result itself (the head and tail the model read, the true line
count and the file holding the full output), never what the live view had kept. apply_patch
shows its changes as a coloured diff. The cell is a single widget (header, output and diff are
one piece of content) so that many tool calls stay cheap to lay out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from agent_cli.display import command_output, command_preview, home_relative, human_size
from agent_cli.events import ToolCallEnd
from agent_cli.tools.mcp_names import split_name
from agent_cli.tui.formatting import duration, one_line, preview_lines
from agent_cli.tui.widgets.diff_view import render_diff

REFRESH_SECONDS = 0.1
LIVE_KEEP_CHARS = 256 * 1024  # the live view keeps the newest output only
TOTAL_LINES = re.compile(r"^Total output lines: (\d+)$", re.MULTILINE)
SPILL_FILE = re.compile(r"^Full output \(.*?\) saved to (.+?);", re.MULTILINE)
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
        self._live_chars = 0
        self._live_cut = False  # the live view dropped its oldest output
        self.result: ToolCallEnd | None = None
        self._scheduled = False

    def on_mount(self) -> None:
        self._refresh_view()

    @property
    def running(self) -> bool:
        return self.result is None

    @property
    def output_text(self) -> str:
        if self.result is not None:
            return command_output(self.result.output)
        return "".join(self.live)

    @property
    def total_lines(self) -> int | None:
        """The command's true line count when its output was cut for the model."""
        match = TOTAL_LINES.search(self.result.output) if self.result else None
        return int(match.group(1)) if match else None

    @property
    def spill_file(self) -> str | None:
        match = SPILL_FILE.search(self.result.output) if self.result else None
        return home_relative(Path(match.group(1))) if match else None

    @property
    def diff(self) -> str:
        if self.result is None:
            return ""
        return "\n".join(change.diff for change in self.result.changes if change.diff)

    def append_output(self, text: str, skipped_bytes: int = 0) -> None:
        if skipped_bytes:
            if self.live and not self.live[-1].endswith("\n"):  # its line went on in what was skipped
                kept = self.live[-1][: self.live[-1].rfind("\n") + 1]
                self._live_chars -= len(self.live[-1]) - len(kept)
                self.live[-1] = kept
            self.live.append(f"… {human_size(skipped_bytes)} not shown …\n")
        self.live.append(text)
        self._live_chars += len(text)
        while self._live_chars > LIVE_KEEP_CHARS and len(self.live) > 1:
            self._live_chars -= len(self.live.pop(0))
            if not self._live_cut:
                self._live_cut = True
        if not self._scheduled:  # coalesce a flood of output into one repaint per tick
            self._scheduled = True
            self.set_timer(REFRESH_SECONDS, self._refresh_view)

    def finish(self, event: ToolCallEnd) -> None:
        self.result = event
        self.live = []  # from now on the result is shown, never the live leftovers
        self._live_chars = 0
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
        notes: list[str] = []
        total = self.total_lines
        if self.expanded:
            if len(lines) > EXPANDED_MAX_LINES:
                notes.append(f"… {len(lines) - EXPANDED_MAX_LINES:,} earlier lines")
                lines = [notes[-1], *lines[-EXPANDED_MAX_LINES:]]
            if self.running and self._live_cut:
                lines = ["… earlier output not kept here", *lines]
                notes.append(lines[0])
        else:
            head, hidden, tail = preview_lines("\n".join(lines))
            if total is not None and (head or tail):  # the result is cut: count against the real output
                hidden = total - len(head) - len(tail)
            if hidden > 0:
                notes.append(f"… {hidden:,} more lines (enter or click to expand)")
                lines = [*head, notes[-1], *tail]
            else:
                lines = head
        if self.spill_file and (total is not None):
            notes.append(f"{total:,} lines in all · full output in {self.spill_file}")
            lines.append(notes[-1])
        parts: list[str | tuple[str, str]] = []
        for index, line in enumerate(lines):
            if index:
                parts.append("\n")
            noted = any(line is note for note in notes) or (line.startswith("… ") and line.endswith(" not shown …"))
            parts.append(("  " + line, "italic $text-muted" if noted else "$text-muted"))
        return Content.assemble(*parts)

    # --- expanding ----------------------------------------------------------------------

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._refresh_view()

    def on_click(self, event: events.Click) -> None:
        self.expanded = not self.expanded

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter":  # a space is typing: it goes to the composer
            event.stop()
            self.expanded = not self.expanded

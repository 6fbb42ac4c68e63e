"""The line above the composer while MCP servers start: who is starting, then how it ended.

It shows only when the session has MCP servers; once none is starting it says how many are ready
(and which failed, with /mcp for details) and hides after a few seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from agent_cli.mcp.manager import ServerState

SHOW_RESULT_SECONDS = 6.0


class McpIndicator(Static):
    DEFAULT_CSS = """
    McpIndicator { display: none; height: 1; padding: 0 2; color: $text-muted; }
    McpIndicator.-shown { display: block; }
    """

    def show_states(self, states: Sequence[ServerState]) -> None:
        running = [s for s in states if s.status != "disabled"]
        if not running:
            return
        starting = [s.name for s in running if s.status == "starting"]
        ready = [s.name for s in running if s.status == "ready"]
        failed = [s.name for s in running if s.status == "failed"]
        if starting:
            text = Content.assemble(
                ("MCP ", "bold"),
                (f"starting {', '.join(starting)}", "$text-warning"),
                f"  ({len(ready)}/{len(running)} ready)",
            )
        else:
            parts: list[str | tuple[str, str]] = [("MCP ", "bold"), (f"{len(ready)} ready", "$text-success")]
            if failed:
                parts += [" · ", (f"failed: {', '.join(failed)}", "$text-error"), " (/mcp for details)"]
            text = Content.assemble(*parts)
            self.set_timer(SHOW_RESULT_SECONDS, lambda: self.remove_class("-shown"))
        self.add_class("-shown")
        self.update(text)

"""``/ps`` in the TUI: the background processes, the output of the highlighted one, and a key to stop it.

Up/Down move, Enter (or ``o``) shows the end of its output, ``k`` stops it, ``r`` refreshes, Esc
closes. The list is read from the session's registry each time, so it is never stale.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.commands.ps_command import NONE_RUNNING, describe
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tui.screens.dialog import DialogScreen

OUTPUT_LINES = 40


class ProcessesScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    ProcessesScreen { align: center middle; }
    ProcessesScreen > #dialog { border: thick $primary; }
    ProcessesScreen #processes { height: auto; max-height: 16; border: none; background: $surface; }
    ProcessesScreen #output-box { height: auto; max-height: 20; margin: 1 0 0 0; background: $surface; }
    ProcessesScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close", show=False),
        Binding("o", "show_output", "output", show=False),
        Binding("k", "stop", "stop", show=False),
        Binding("r", "refresh_list", "refresh", show=False),
    ]

    def __init__(self, background: BackgroundProcesses) -> None:
        super().__init__()
        self.background = background

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Background processes", id="title")
            yield OptionList(id="processes")
            with VerticalScroll(id="output-box"):
                yield Static("", id="output")
            yield Static("↑↓ move · enter/o output · k stop · r refresh · esc close", id="keys")

    def on_mount(self) -> None:
        self.action_refresh_list()
        self.query_one("#processes", OptionList).focus()

    def action_refresh_list(self) -> None:
        options = self.query_one("#processes", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        processes = self.background.list()
        if not processes:
            options.add_option(Option(NONE_RUNNING, disabled=True))
            return
        options.add_options([Option(describe(proc.info()), id=proc.id) for proc in processes])
        options.highlighted = min(highlighted or 0, len(processes) - 1)

    def _selected_id(self) -> str | None:
        options = self.query_one("#processes", OptionList)
        if options.highlighted is None:
            return None
        return options.get_option_at_index(options.highlighted).id

    @on(OptionList.OptionSelected, "#processes")
    def action_show_output(self) -> None:
        proc = self.background.get(self._selected_id() or "")
        if proc is None:
            return
        lines = proc.tail_text().splitlines()[-OUTPUT_LINES:]
        text = "\n".join(lines) if lines else "(no output yet)"
        self.query_one("#output", Static).update(f"{proc.id} — {proc.log_path}\n{text}")

    @work(group="ps-stop")
    async def action_stop(self) -> None:
        proc = self.background.get(self._selected_id() or "")
        if proc is None or not proc.running:
            return
        await self.background.kill(proc)
        self.action_refresh_list()
        self.query_one("#output", Static).update(f"stopped {proc.id} (pid {proc.pid})")

    def action_close(self) -> None:
        self.dismiss(None)

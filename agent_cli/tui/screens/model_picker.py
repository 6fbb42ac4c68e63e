"""The ``/model`` picker: the provider's models, the model table's and the ones used before.

Keyboard first: type to filter, Up/Down to move, Enter to switch, Esc to cancel. The screen
only returns the chosen name; the switch itself goes through ``/model NAME``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.tui.screens.dialog import DialogScreen


class ModelPickerScreen(DialogScreen[str | None]):
    DEFAULT_CSS = """
    ModelPickerScreen { align: center middle; }
    ModelPickerScreen > #dialog { border: thick $primary; }
    ModelPickerScreen OptionList { height: auto; max-height: 20; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel", show=False),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]

    def __init__(self, models: Sequence[str], current: str, sources: dict[str, str]) -> None:
        super().__init__()
        self.models = list(models)
        self.current = current
        self.sources = sources  # model -> where it came from ("in use", "provider", "model table")
        self.shown: list[str] = list(models)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"Switch the model (now {self.current})", id="title")
            yield Input(placeholder="type to filter · enter switches · esc cancels", id="filter")
            yield OptionList(*self._options(), id="models")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self.query_one(OptionList).highlighted = 0 if self.shown else None

    def _options(self) -> list[Option]:
        return [
            Option(
                Content.assemble(
                    (name, "bold" if name == self.current else ""), (f"  {self.sources.get(name, '')}", "dim")
                )
            )
            for name in self.shown
        ]

    @on(Input.Changed, "#filter")
    def refilter(self, event: Input.Changed) -> None:
        words = event.value.lower().split()
        self.shown = [m for m in self.models if all(w in m.lower() for w in words)]
        options = self.query_one(OptionList)
        options.set_options(self._options())
        options.highlighted = 0 if self.shown else None

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            options.highlighted = ((options.highlighted or 0) + delta) % len(self.shown)

    @on(Input.Submitted, "#filter")
    def choose_highlighted(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is not None and self.shown:
            self.dismiss(self.shown[highlighted])

    @on(OptionList.OptionSelected)
    def choose(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.shown[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)

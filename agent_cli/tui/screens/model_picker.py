"""The ``/model`` picker: the provider's models, the model table's and the ones used before.

Keyboard first: type to filter, Up/Down to move, Enter to switch, Esc to cancel. A typed name
that matches none of them is taken as it is (Enter), as ``/model NAME`` takes it: checked, and
asked about when the provider does not list it. The screen only returns the chosen name; the
switch itself goes through ``/model NAME``.
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
    ModelPickerScreen #typed { display: none; margin: 1 0 0 0; color: $text-muted; }
    ModelPickerScreen.-none-matches #typed { display: block; }
    ModelPickerScreen.-none-matches OptionList { display: none; }
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
            yield Input(placeholder="type to filter, or a model's name · enter switches · esc cancels", id="filter")
            yield OptionList(*self._options(), id="models")
            yield Static(id="typed")

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
        typed = event.value.strip()
        self.set_class(bool(typed) and not self.shown, "-none-matches")
        self.query_one("#typed", Static).update(
            Content.assemble("no model listed matches; enter switches to ", (typed, "bold"), " (checked first)")
        )

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            options.highlighted = ((options.highlighted or 0) + delta) % len(self.shown)

    @on(Input.Submitted, "#filter")
    def choose_highlighted(self, event: Input.Submitted) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is not None and self.shown:
            self.dismiss(self.shown[highlighted])
        elif typed := event.value.strip():
            self.dismiss(typed)  # a name no list holds: /model checks it and asks

    @on(OptionList.OptionSelected)
    def choose(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.shown[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)

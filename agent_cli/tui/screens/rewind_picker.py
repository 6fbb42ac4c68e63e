"""The ``/rewind`` picker (also Esc Esc on an empty composer): the conversation's prompts with
what each turn changed; Enter on one, then how far to go back: code and conversation,
conversation only, or code only. Returns ``(prompt number, mode)``, or None on Esc."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.session.checkpointing import PromptEntry
from agent_cli.tui.formatting import one_line
from agent_cli.tui.screens.dialog import DialogScreen

MODES = (
    ("both", "Code and conversation", "restore the files and go back to this prompt"),
    ("conversation", "Conversation only", "go back to this prompt; the files stay as they are"),
    ("code", "Code only", "restore the files; the conversation goes on"),
)


def prompt_row(number: int, entry: PromptEntry, width: int = 100) -> Content:
    return Content.assemble((f"{number}. {one_line(entry.shown, width)}", "bold"), "\n", (entry.changes(), "dim"))


class RewindPickerScreen(DialogScreen[tuple[int, str] | None]):
    DEFAULT_CSS = """
    RewindPickerScreen { align: center middle; }
    RewindPickerScreen > #dialog { border: thick $warning; }
    RewindPickerScreen #choices { height: auto; max-height: 24; border: none; background: $surface; }
    RewindPickerScreen #choices > .option-list--option { padding: 0 1; }
    RewindPickerScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, entries: Sequence[PromptEntry]) -> None:
        super().__init__()
        self.entries = list(entries)
        self.number: int | None = None  # the prompt chosen; then the mode is asked

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Rewind to before which prompt?", id="title")
            yield OptionList(
                *[Option(prompt_row(n, e), id=str(n)) for n, e in enumerate(self.entries, start=1)], id="choices"
            )
            yield Static("↑↓ move · enter choose · esc cancel", id="keys")

    def on_mount(self) -> None:
        choices = self.query_one("#choices", OptionList)
        choices.highlighted = len(self.entries) - 1 if self.entries else None
        choices.focus()

    @on(OptionList.OptionSelected, "#choices")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        if self.number is None:
            self.number = int(event.option.id or "0")
            entry = self.entries[self.number - 1]
            self.query_one("#title", Static).update(f"Rewind to before: {one_line(entry.shown, 80)}")
            choices = self.query_one("#choices", OptionList)
            choices.clear_options()
            choices.add_options(
                [
                    Option(Content.assemble((title, "bold"), "\n", (help_text, "dim")), id=mode)
                    for mode, title, help_text in MODES
                ]
            )
            choices.highlighted = 0
        else:
            self.dismiss((self.number, event.option.id or "both"))

    def action_cancel(self) -> None:
        self.dismiss(None)

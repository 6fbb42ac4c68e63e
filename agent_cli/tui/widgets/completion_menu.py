"""The pop-up list above the composer for ``@`` files, ``/`` commands and ``$`` skills.

It never takes focus: the composer keeps the cursor and forwards Up/Down/Tab/Enter/Esc here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_cli.tui.formatting import one_line

Kind = Literal["file", "command", "skill"]


@dataclass(frozen=True, slots=True)
class Completion:
    value: str  # what replaces the typed token
    label: str
    description: str = ""


class CompletionMenu(OptionList, can_focus=False):
    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 10;
        margin: 0 1;
        border: none;
        padding: 0;
        background: $surface;
    }
    CompletionMenu.-visible { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kind: Kind | None = None
        self.items: list[Completion] = []

    @property
    def is_open(self) -> bool:
        return self.has_class("-visible")

    def show(self, kind: Kind, items: list[Completion]) -> None:
        if not items:
            self.hide()
            return
        self.kind = kind
        self.items = items
        width = max(len(item.label) for item in items) + 2
        room = max(10, self.app.size.width - width - 8)  # one line per option: long descriptions are cut
        self.set_options(
            Option(
                Content.assemble((item.label.ljust(width), "bold"), (one_line(item.description, room), "$text-muted"))
            )
            for item in items
        )
        self.highlighted = 0
        self.add_class("-visible")

    def hide(self) -> None:
        self.kind = None
        self.items = []
        self.remove_class("-visible")

    def move(self, delta: int) -> None:
        if self.items:
            self.highlighted = ((self.highlighted or 0) + delta) % len(self.items)

    @property
    def selected(self) -> Completion | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]

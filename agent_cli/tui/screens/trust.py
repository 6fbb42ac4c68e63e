"""The trust question: the first time a folder that carries its own MCP servers, hooks, plugins,
allow rules or settings that wait for trust is opened, show exactly what would run and ask once. ``t`` trusts, ``n``/``esc`` not."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from agent_cli.display import home_relative
from agent_cli.trust.inventory import Inventory
from agent_cli.tui.screens.dialog import DialogScreen


class TrustScreen(DialogScreen[bool]):
    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > #dialog { border: thick $warning; }
    TrustScreen #items { height: auto; max-height: 20; margin: 0 0 1 0; background: $surface; padding: 0 1; }
    TrustScreen .note { color: $text-muted; margin: 0 0 1 0; }
    TrustScreen #buttons { height: auto; }
    TrustScreen Button { margin: 0 2 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "trust", "trust", show=False),
        Binding("n", "distrust", "do not trust", show=False),
        Binding("escape", "distrust", "do not trust", show=False),
    ]

    def __init__(self, inventory: Inventory) -> None:
        super().__init__()
        self.inventory = inventory

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"Trust the folder {home_relative(self.inventory.folder)}?", id="title")
            yield Static(
                Content("It carries its own code and settings, which would run or apply with your permissions:"),
                classes="note",
            )
            with VerticalScroll(id="items"):
                for item in self.inventory.items:
                    yield Static(Content(f"• {item.line()}"))
            yield Static(
                Content(
                    "Until you trust it, none of this runs; the session works without it. "
                    "You are asked again when it changes."
                ),
                classes="note",
            )
            with Horizontal(id="buttons"):
                yield Button(
                    Content.from_markup("[u]t[/u] Trust this folder"), id="trust", variant="warning", compact=True
                )
                yield Button(
                    Content.from_markup("[u]n[/u] No, run none of it"), id="distrust", variant="primary", compact=True
                )

    def on_mount(self) -> None:
        self.query_one("#distrust", Button).focus()

    @on(Button.Pressed, "#trust")
    def action_trust(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#distrust")
    def action_distrust(self) -> None:
        self.dismiss(False)

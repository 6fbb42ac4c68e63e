"""The first cell: what this is, where it runs, and the keys that matter."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from agent_cli import __version__


class WelcomeBanner(Static):
    DEFAULT_CSS = """
    WelcomeBanner { margin: 1 0 1 0; padding: 0 1; border: round $primary-muted; width: auto; }
    """

    def __init__(self, model: str, provider: str, directory: str, notes: Sequence[str] = ()) -> None:
        super().__init__(
            Content.assemble(
                (">_ agent-cli", "bold"),
                (f" v{__version__}", "$text-muted"),
                "\n",
                ("model     ", "$text-muted"),
                f"{model} ({provider})",
                "\n",
                ("directory ", "$text-muted"),
                directory,
                *(part for note in notes for part in ("\n", (note, "$text-muted"))),
                "\n\n",
                ("enter send · shift+enter newline · @ file · / command · esc interrupt", "$text-muted"),
            )
        )

"""Images attached to the next message, one chip each. Clicking a chip removes it; so does
Backspace in an empty composer (the last chip). Chips never take the focus from the composer."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.containers import HorizontalGroup
from textual.widgets import Button


class AttachmentChips(HorizontalGroup):
    DEFAULT_CSS = """
    AttachmentChips { display: none; height: auto; margin: 0 1; }
    AttachmentChips.-visible { display: block; }
    AttachmentChips Button { margin: 0 1 0 0; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._paths: list[Path] = []

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(self._paths)

    async def add(self, paths: list[Path] | tuple[Path, ...]) -> None:
        for path in paths:
            if path not in self._paths:
                self._paths.append(path)
                chip = Button(f"🖼 {path.name} ✕", tooltip=f"{path} (click to remove)", compact=True)
                chip.can_focus = False
                await self.mount(chip)
        self.set_class(bool(self._paths), "-visible")

    async def take(self) -> tuple[Path, ...]:
        """The attached paths, leaving no chip behind (they go with the message being sent)."""
        taken = self.paths
        self._paths.clear()
        await self.remove_children()
        self.set_class(False, "-visible")
        return taken

    async def remove_last(self) -> None:
        if self._paths:
            await self._remove_chip(len(self._paths) - 1)

    @on(Button.Pressed)
    async def _clicked(self, event: Button.Pressed) -> None:
        event.stop()
        await self._remove_chip(list(self.query(Button)).index(event.button))

    async def _remove_chip(self, index: int) -> None:
        del self._paths[index]
        await list(self.query(Button))[index].remove()
        self.set_class(bool(self._paths), "-visible")

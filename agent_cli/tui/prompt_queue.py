"""Input sent while a turn runs, in order: shown above the composer, sent one at a time as each
turn ends; Up in an empty composer takes the last one back to edit. After an interrupt nothing is
sent behind the user's back: the queue goes back into the composer, unless Ctrl+S asked for it
to be sent right after the interrupted turn."""

from __future__ import annotations

from collections.abc import Callable

from agent_cli.tui.widgets.attachment_chips import AttachmentChips
from agent_cli.tui.widgets.composer import Composer
from agent_cli.tui.widgets.queued_messages import QueuedMessages


class PromptQueue(list[str]):
    """The inputs waiting (a list, so a command can put one first: ``/rewind``'s choice)."""

    def __init__(self, shown: QueuedMessages, composer: Composer, attachments: AttachmentChips) -> None:
        super().__init__()
        self.shown = shown
        self.composer = composer
        self.attachments = attachments
        self.send_now = False  # Ctrl+S: sent as soon as the interrupted turn ends

    def add(self, text: str) -> None:
        self.append(text)
        self.shown.show_queue(self)

    def take_last(self) -> str | None:
        """The newest input, out of the queue (Up in an empty composer edits it)."""
        if not self:
            return None
        text = self.pop()
        self.shown.show_queue(self)
        return text

    def after_turn(self, interrupted: bool, send: Callable[[str], None]) -> None:
        """A turn ended: ``send`` the next input, or give them all back after an interrupt."""
        send_now, self.send_now = self.send_now, False
        if not self:
            return
        if interrupted and not send_now:
            restored = "\n\n".join(self)
            images = [path for text in self for path in getattr(text, "images", ())]
            self.composer.run_worker(self.attachments.add(images))
            current = self.composer.text
            self.composer.load_text(f"{restored}\n\n{current}" if current.strip() else restored)
            self.composer.move_cursor(self.composer.document.end)
            self.clear()
        else:
            send(self.pop(0))
        self.shown.show_queue(self)

"""Claude Code's question for a sandboxed command's request to a host no list names: "Network
request outside of sandbox — Host: X", while the command waits on it.

``y`` Yes (for this session), ``a`` Yes, and don't ask again for X (saved to your config.toml),
``n`` or ``esc`` No (refused for this session). Like the approval modal it answers nothing until
it has been on screen for ``ARM_SECONDS`` with no key pressed: letters typed meanwhile go back
to the composer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Button, Static

from agent_cli.events import ApprovalDecision, ApprovalRequest
from agent_cli.terminal_text import terminal_safe
from agent_cli.tui.screens.approval import ARM_SECONDS
from agent_cli.tui.screens.dialog import DialogScreen

TITLE = "Network request outside of sandbox"


class NetworkQuestionScreen(DialogScreen[ApprovalDecision | None]):
    DEFAULT_CSS = """
    NetworkQuestionScreen { align: center bottom; }
    NetworkQuestionScreen > #dialog { border: thick $warning; }
    NetworkQuestionScreen #host { padding: 0 1; color: $text-accent; background: $surface; margin: 0 0 1 0; }
    NetworkQuestionScreen #why { color: $text-muted; margin: 0 0 1 0; }
    NetworkQuestionScreen #buttons { height: auto; }
    NetworkQuestionScreen #arming { color: $text-muted; height: 1; }
    NetworkQuestionScreen.-armed #arming { display: none; }
    NetworkQuestionScreen Button { margin: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "yes", "yes", show=False),
        Binding("a", "always", "don't ask again", show=False),
        Binding("n", "no", "no", show=False),
        Binding("escape", "no", "no", show=False),
    ]

    def __init__(self, request: ApprovalRequest, typed_early: Callable[[str], object] | None = None) -> None:
        super().__init__()
        self.request = request
        self.host = terminal_safe(request.summary)  # a name from a command: no escape sequences
        self.typed_early = typed_early
        self.armed = False
        self._arm_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        who = f"The {self.request.agent} subagent's" if self.request.agent else "A sandboxed"
        port = (self.request.reason or "").rpartition("port ")[2]
        where = f" on port {terminal_safe(port)}" if port.isdigit() else ""
        with Vertical(id="dialog"):
            yield Static(TITLE, id="title")
            yield Static(Content(f"Host: {self.host}"), id="host")
            yield Static(Content(f"{who} command waits to connect to it{where}. Allow the connection?"), id="why")
            with Vertical(id="buttons"):
                yield Button(Content.from_markup("[u]y[/u] Yes"), id="yes", variant="success", compact=True)
                yield Button(
                    Content.from_markup("[u]a[/u] Yes, and don't ask again for ") + Content(self.host),
                    id="always",
                    variant="primary",
                    compact=True,
                )
                yield Button(Content.from_markup("[u]n[/u] No"), id="no", variant="error", compact=True)
            yield Static("keys wait until you stop typing…", id="arming")

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.disabled = True
        self.call_after_refresh(self._restart_arming)  # counted from the first paint
        if self.request.future is not None:  # the command ended first: nobody waits for the answer
            self.request.future.add_done_callback(lambda _: self._gone())

    def _gone(self) -> None:
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def _restart_arming(self) -> None:
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self._arm_timer = self.set_timer(ARM_SECONDS, self._arm)

    def _arm(self) -> None:
        self.armed = True
        self.add_class("-armed")
        for button in self.query(Button):
            button.disabled = False
        self.query_one("#yes", Button).focus()

    def on_key(self, event: events.Key) -> None:
        """Before the question is armed a key answers nothing; a letter goes back to the draft."""
        if self.armed:
            return
        event.stop()
        event.prevent_default()
        self._restart_arming()
        if event.is_printable and event.character and self.typed_early is not None:
            self.typed_early(event.character)

    def _answer(self, decision: str) -> None:
        if self.armed:
            self.dismiss(ApprovalDecision(decision))  # type: ignore[arg-type]

    @on(Button.Pressed, "#yes")
    def action_yes(self) -> None:
        self._answer("approve")

    @on(Button.Pressed, "#always")
    def action_always(self) -> None:
        self._answer("approve_always")

    @on(Button.Pressed, "#no")
    def action_no(self) -> None:
        self._answer("deny")

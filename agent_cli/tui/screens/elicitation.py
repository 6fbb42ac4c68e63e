"""An MCP server asks the user for input mid-call: a form of its schema's fields (validated before
it is sent), or in URL mode the page it wants opened. Enter or ctrl+s submits, ctrl+n declines,
esc cancels; the server is told which."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Input, Select, Static

from agent_cli.events import ElicitationAnswer, ElicitationRequest
from agent_cli.mcp.elicitation import FormField, form_fields, validate
from agent_cli.tui.screens.dialog import DialogScreen

INPUT_TYPES: dict[str, Literal["integer", "number", "text"]] = {"integer": "integer", "number": "number"}


def elicitation_answered(request: ElicitationRequest) -> Callable[[ElicitationAnswer | None], None]:
    """The screen's callback: its answer goes to the server (a screen closed without one cancels)."""

    def answer(result: ElicitationAnswer | None) -> None:
        if request.future is not None and not request.future.done():
            request.future.set_result(result or ElicitationAnswer("cancel"))

    return answer


class ElicitationScreen(DialogScreen[ElicitationAnswer]):
    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; }
    ElicitationScreen > #dialog { border: thick $accent; }
    ElicitationScreen #fields { height: auto; max-height: 24; }
    ElicitationScreen .label { margin: 1 0 0 0; }
    ElicitationScreen .note { color: $text-muted; }
    ElicitationScreen .error { color: $error; }
    ElicitationScreen #buttons { height: auto; margin: 1 0 0 0; }
    ElicitationScreen Button { margin: 0 2 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "submit", show=False),
        Binding("ctrl+n", "decline", "decline", show=False),
        Binding("escape", "cancel", "cancel", show=False),
    ]

    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__()
        self.request = request
        self.fields: list[FormField] = form_fields(request.schema) if request.mode == "form" else []

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="dialog"):
            yield Static(Content(f"MCP server '{request.server}' asks"), id="title")
            yield Static(Content(request.message), id="message")
            if request.mode == "url":
                yield Static(Content(f"It wants to open: {request.url}"), classes="note")
            with VerticalScroll(id="fields"):
                for index, field in enumerate(self.fields):
                    yield from self._field(index, field)
            with Horizontal(id="buttons"):
                accept = "Open in browser" if request.mode == "url" else "Submit"
                yield Button(accept, id="accept", variant="primary", compact=True)
                yield Button("Decline", id="decline", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def _field(self, index: int, field: FormField) -> ComposeResult:
        label = field.title + (" *" if field.required else "")
        if field.kind == "boolean":
            yield Checkbox(label, value=bool(field.default), id=f"field-{index}", compact=True, classes="label")
        else:
            yield Static(Content(label), classes="label")
            if field.kind == "enum":
                options = list(zip(field.labels, field.choices, strict=True))
                default = str(field.default) if field.default is not None else Select.BLANK
                yield Select(options, value=default, id=f"field-{index}", compact=True)
            else:
                value = "" if field.default is None else str(field.default)
                yield Input(
                    value, placeholder=field.kind, id=f"field-{index}", type=INPUT_TYPES.get(field.kind, "text")
                )
        if field.description:
            yield Static(Content(field.description), classes="note")
        yield Static("", id=f"error-{index}", classes="error")

    def on_mount(self) -> None:
        first = self.query("#fields Input, #fields Select, #fields Checkbox").first() if self.fields else None
        (first or self.query_one("#accept", Button)).focus()
        if self.request.future is not None:  # answered elsewhere (another window on the same host)
            self.request.future.add_done_callback(lambda _: self._answered_elsewhere())

    def _answered_elsewhere(self) -> None:
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for index, field in enumerate(self.fields):
            widget = self.query_one(f"#field-{index}")
            value = widget.value  # type: ignore[attr-defined]
            values[field.name] = None if value is Select.BLANK else value
        return values

    @on(Input.Submitted)
    @on(Button.Pressed, "#accept")
    def action_submit(self) -> None:
        if self.request.mode == "url":
            self.dismiss(ElicitationAnswer("accept"))
            return
        content, errors = validate(self.fields, self.values())
        for index, field in enumerate(self.fields):
            self.query_one(f"#error-{index}", Static).update(Content(errors.get(field.name, "")))
        if errors:
            bad = next(index for index, field in enumerate(self.fields) if field.name in errors)
            self.query_one(f"#field-{bad}").focus()
            return
        self.dismiss(ElicitationAnswer("accept", content))

    @on(Button.Pressed, "#decline")
    def action_decline(self) -> None:
        self.dismiss(ElicitationAnswer("decline"))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(ElicitationAnswer("cancel"))

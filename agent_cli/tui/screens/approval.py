"""The approval modal: show the command or patch, then approve once, for the session, or deny.

Keyboard first: ``y`` approve, ``a`` approve for the session, ``d`` approve and don't ask again
(the rule to save is shown for editing, Enter saves it), ``n`` deny (a reason for the model may be
typed, Enter sends it), ``esc`` denies without a reason.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, Static

from agent_cli.events import ApprovalDecision, ApprovalRequest
from agent_cli.tui.screens.dialog import DialogScreen
from agent_cli.tui.widgets.diff_view import DiffView

DENY_PLACEHOLDER = "reason for the model (optional) · enter to deny · esc for no reason"
RULE_FILES = {"agent": ".agent/config.toml", "claude": ".claude/settings.local.json"}


def rule_label(rule: str) -> str:
    """``npm test:*`` for ``Bash(npm test:*)``: the part a person reads."""
    return rule[5:-1] if rule.startswith("Bash(") and rule.endswith(")") else rule


class ApprovalScreen(DialogScreen[ApprovalDecision]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center bottom; }
    ApprovalScreen > #dialog { border: thick $warning; }
    ApprovalScreen #summary { height: auto; max-height: 20; margin: 0 0 1 0; background: $surface; }
    ApprovalScreen #command { padding: 0 1; color: $text-accent; }
    ApprovalScreen #reason-note { color: $text-muted; margin: 0 0 1 0; }
    ApprovalScreen #buttons { height: auto; }
    ApprovalScreen Button { margin: 0 2 0 0; }
    ApprovalScreen #deny-reason { display: none; margin: 1 0 0 0; }
    ApprovalScreen.-asking-reason #deny-reason { display: block; }
    ApprovalScreen #approve_always { margin: 1 0 0 0; }
    ApprovalScreen #rule, ApprovalScreen #save-to { display: none; margin: 1 0 0 0; height: auto; }
    ApprovalScreen.-editing-rule #rule, ApprovalScreen.-editing-rule #save-to { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "approve", show=False),
        Binding("a", "approve_session", "approve for session", show=False),
        Binding("d", "edit_rule", "don't ask again", show=False),
        Binding("n", "ask_reason", "deny", show=False),
        Binding("escape", "deny", "deny", show=False),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="dialog"):
            what = "apply this patch" if request.tool == "apply_patch" else f"run this {request.tool} command"
            who = f"the {request.agent} subagent" if request.agent else "the agent"
            yield Static(f"Allow {who} to {what}?", id="title")
            with VerticalScroll(id="summary"):
                if request.tool == "apply_patch":
                    yield DiffView(request.summary)
                else:
                    yield Static(Content("$ " + request.summary), id="command")
            if request.reason:
                yield Static(Content(request.reason), id="reason-note")
            with Horizontal(id="buttons"):
                yield Button(Content.from_markup("[u]Y[/u]es, once"), id="approve", variant="success", compact=True)
                yield Button(
                    Content.from_markup("Yes, for this [u]s[/u]ession (a)"),
                    id="approve_session", variant="primary", compact=True,
                )
                yield Button(
                    Content.from_markup("[u]N[/u]o, tell the model why"), id="deny", variant="error", compact=True
                )
            yield Input(placeholder=DENY_PLACEHOLDER, id="deny-reason")
            if request.suggested_rule:
                yield Button(
                    Content.from_markup("Yes, and [u]d[/u]on't ask again for ") + Content(f"`{rule_label(request.suggested_rule)}`"),
                    id="approve_always", variant="primary", compact=True,
                )
                yield Input(request.suggested_rule, id="rule")
                with Horizontal(id="save-to"):
                    for destination in request.rule_files:
                        yield Button(f"Save to {RULE_FILES.get(destination, destination)}", id=f"save-{destination}", compact=True)

    def on_mount(self) -> None:
        self.query_one("#approve", Button).focus()

    @on(Button.Pressed, "#approve")
    def action_approve(self) -> None:
        self.dismiss(ApprovalDecision("approve"))

    @on(Button.Pressed, "#approve_session")
    def action_approve_session(self) -> None:
        self.dismiss(ApprovalDecision("approve_session"))

    @on(Button.Pressed, "#approve_always")
    def action_edit_rule(self) -> None:
        if not self.request.suggested_rule:
            return
        self.add_class("-editing-rule")
        self.query_one("#rule", Input).focus()

    @on(Input.Submitted, "#rule")
    def save_rule(self) -> None:
        self._approve_always(self.request.rule_files[0] if self.request.rule_files else None)

    @on(Button.Pressed, "#save-to Button")
    def save_rule_to(self, event: Button.Pressed) -> None:
        self._approve_always((event.button.id or "").removeprefix("save-"))

    def _approve_always(self, save_to: str | None) -> None:
        rule = self.query_one("#rule", Input).value.strip()
        if rule:
            self.dismiss(ApprovalDecision("approve_always", rule=rule, save_to=save_to))

    @on(Button.Pressed, "#deny")
    def action_ask_reason(self) -> None:
        self.add_class("-asking-reason")
        self.query_one("#deny-reason", Input).focus()

    def action_deny(self) -> None:
        self.dismiss(ApprovalDecision("deny"))

    @on(Input.Submitted, "#deny-reason")
    def deny_with_reason(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        self.dismiss(ApprovalDecision("deny", reason or None))

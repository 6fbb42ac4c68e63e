"""The approval modal: show the command or patch, then approve once, for the session, or deny.

Keyboard first: ``y`` approve, ``a`` approve for the session, ``d`` approve and don't ask again
(the rule to save is shown for editing, Enter saves it), ``n`` deny (a reason for the model may be
typed, Enter sends it), ``esc`` denies without a reason.

The modal often opens while the user is still typing their next message. Until it has been on
screen for ``ARM_SECONDS`` with no key pressed in that time, it answers nothing: letters go back
to the composer (through ``typed_early``) and every other key is dropped, so a keystroke meant
for the draft can never approve a command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Button, Input, Static

from agent_cli.events import ApprovalDecision, ApprovalRequest
from agent_cli.session.safe_commands import command_prefix
from agent_cli.terminal_text import terminal_safe
from agent_cli.tools.patch_preview import preview_changes
from agent_cli.tui.screens.dialog import DialogScreen
from agent_cli.tui.widgets.diff_view import DiffView

DENY_PLACEHOLDER = "reason for the model (optional) · enter to deny · esc for no reason"
RULE_FILES = {"agent": ".agent/config.toml", "claude": ".claude/settings.local.json"}
QUESTIONS = frozenset(
    {"init", "model", "undo", "rewind"}
)  # approval requests that commands use to ask a yes/no question
ARM_SECONDS = 0.6  # how long the modal must be visible before a key can answer it


def rule_label(rule: str) -> str:
    """What a rule covers, in words a person reads: ``npm test:*`` for ``Bash(npm test:*)``,
    "file edits" for ``Edit`` (a tool name the user never sees)."""
    tool, _, inner = rule.partition("(")
    inner = inner[:-1] if inner.endswith(")") else inner
    if tool == "Bash" and inner:
        return f"`{inner}`"
    if tool in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
        return f"file edits in `{inner}`" if inner else "file edits"
    if tool == "WebFetch" and inner.startswith("domain:"):
        return f"fetches from `{inner[7:]}`"
    return f"`{rule}`"


def session_scope(request: ApprovalRequest) -> str:
    """What "Yes, for this session" covers, in the words of the session's approval key."""
    if request.tool == "shell":
        prefix = command_prefix(request.summary)
        return "this exact command" if prefix.startswith("=") or not prefix else f"commands starting with `{prefix}`"
    if request.tool == "apply_patch":
        return "every patch"
    return f"every {request.tool} call"


class ApprovalScreen(DialogScreen[ApprovalDecision]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center bottom; }
    ApprovalScreen > #dialog { border: thick $warning; }
    ApprovalScreen #summary { height: auto; max-height: 20; margin: 0 0 1 0; background: $surface; }
    ApprovalScreen #command { padding: 0 1; color: $text-accent; }
    ApprovalScreen #reason-note { color: $text-muted; margin: 0 0 1 0; }
    ApprovalScreen #buttons { height: auto; }
    ApprovalScreen #arming { color: $text-muted; height: 1; }
    ApprovalScreen.-armed #arming { display: none; }
    /* An option longer than the dialog wraps (60 columns cut "…for commands startin"). */
    ApprovalScreen #buttons Button { margin: 0; max-width: 100%; height: auto; }
    ApprovalScreen #save-to Button { margin: 0; }
    ApprovalScreen #deny-reason { display: none; margin: 1 0 0 0; }
    ApprovalScreen.-asking-reason #deny-reason { display: block; }
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

    def __init__(
        self, request: ApprovalRequest, typed_early: Callable[[str], object] | None = None, cwd: Path | None = None
    ) -> None:
        super().__init__()
        self.request = request
        self.cwd = cwd or Path.cwd()  # where the patch's paths start
        self.typed_early = typed_early
        self.armed = False
        self._arm_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        request = self.request
        question = request.tool in QUESTIONS  # a command asking the user, not a tool call to allow
        with Vertical(id="dialog"):
            what = "apply this patch" if request.tool == "apply_patch" else f"run this {request.tool} command"
            who = f"the {request.agent} subagent" if request.agent else "the agent"
            title = request.summary[:1].upper() + request.summary[1:] + "?" if question else f"Allow {who} to {what}?"
            yield Static(Content(title), id="title")
            if question and request.reason and "\n" in request.reason:  # a preview (the new AGENTS.md)
                with VerticalScroll(id="summary"):
                    yield Static(Content(request.reason), id="preview")
            elif not question:
                with VerticalScroll(id="summary"):
                    if request.tool == "apply_patch":
                        changes = preview_changes(request.summary, self.cwd)
                        diff = terminal_safe("\n".join(c.diff for c in changes if c.diff))  # the files' own text
                        yield DiffView(diff or request.summary)
                    else:
                        yield Static(Content("$ " + request.summary), id="command")
            if request.reason and not (question and "\n" in request.reason):
                yield Static(Content(request.reason), id="reason-note")
            with Vertical(id="buttons"):
                yield Button(
                    Content.from_markup("[u]y[/u] Yes" if question else "[u]y[/u] Yes, once"),
                    id="approve",
                    variant="success",
                    compact=True,
                    disabled=True,
                )
                if not question:
                    yield Button(
                        Content.assemble(
                            Content.from_markup("[u]a[/u] Yes, and don't ask again for "),
                            session_scope(request),
                            " this session",
                        ),
                        id="approve_session",
                        variant="primary",
                        compact=True,
                        disabled=True,
                    )
                if request.suggested_rule and not question:
                    yield Button(
                        Content.from_markup("[u]d[/u] Yes, and don't ask again for ")
                        + Content(rule_label(request.suggested_rule))
                        + Content(" (saved as a rule)"),
                        id="approve_always",
                        variant="primary",
                        compact=True,
                        disabled=True,
                    )
                yield Button(
                    Content.from_markup("[u]n[/u] No" if question else "[u]n[/u] No, tell the model why"),
                    id="deny",
                    variant="error",
                    compact=True,
                    disabled=True,
                )
            yield Static("keys wait until you stop typing…", id="arming")
            yield Input(placeholder=DENY_PLACEHOLDER, id="deny-reason")
            if request.suggested_rule and not question:
                yield Input(request.suggested_rule, id="rule")
                with Horizontal(id="save-to"):
                    for destination in request.rule_files:
                        yield Button(
                            f"Save to {RULE_FILES.get(destination, destination)}",
                            id=f"save-{destination}",
                            compact=True,
                        )

    def on_mount(self) -> None:
        self.call_after_refresh(self._restart_arming)  # counted from the first paint
        if self.request.future is not None:  # answered elsewhere (another window on the same host)
            self.request.future.add_done_callback(lambda _: self._answered_elsewhere())

    def _answered_elsewhere(self) -> None:
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
        self.query_one("#approve", Button).focus()

    def on_key(self, event: events.Key) -> None:
        """Before the modal is armed a key answers nothing; a letter goes back to the draft."""
        if self.armed:
            return
        event.stop()
        event.prevent_default()
        self._restart_arming()  # still typing: the delay counts from the last key
        if event.is_printable and event.character and self.typed_early is not None:
            self.typed_early(event.character)

    @on(Button.Pressed, "#approve")
    def action_approve(self) -> None:
        if self.armed:
            self.dismiss(ApprovalDecision("approve"))

    @on(Button.Pressed, "#approve_session")
    def action_approve_session(self) -> None:
        if self.armed and self.request.tool not in QUESTIONS:
            self.dismiss(ApprovalDecision("approve_session"))

    @on(Button.Pressed, "#approve_always")
    def action_edit_rule(self) -> None:
        if not self.armed or not self.request.suggested_rule or self.request.tool in QUESTIONS:
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
        if rule and self.armed:
            self.dismiss(ApprovalDecision("approve_always", rule=rule, save_to=save_to))

    @on(Button.Pressed, "#deny")
    def action_ask_reason(self) -> None:
        if self.armed and self.request.tool in QUESTIONS:
            self.dismiss(ApprovalDecision("deny"))
        elif self.armed:
            self.add_class("-asking-reason")
            self.query_one("#deny-reason", Input).focus()

    def action_deny(self) -> None:
        if self.armed:
            self.dismiss(ApprovalDecision("deny"))

    @on(Input.Submitted, "#deny-reason")
    def deny_with_reason(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        self.dismiss(ApprovalDecision("deny", reason or None))

"""Questions a running turn asks the user, each a dialog whose answer settles the request's
future: an approval (a command, a patch, a yes/no of a command), the network question (a
sandboxed command reaching a host no list names) and an MCP server's form. The
turn waits meanwhile; the activity line and the terminal's title say what it waits for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_cli import events as ev
from agent_cli.tui.attention import Attention
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.screens.elicitation import ElicitationScreen, elicitation_answered
from agent_cli.tui.screens.network_question import NetworkQuestionScreen
from agent_cli.tui.widgets.activity_indicator import ActivityIndicator

WAITING_FOR_APPROVAL = "waiting for approval"


class Questions:
    def __init__(
        self,
        push_screen: Callable[..., object],
        activity: ActivityIndicator,
        attention: Attention,
        typed_early: Callable[[str], object],
    ) -> None:
        self.push_screen = push_screen
        self.activity = activity
        self.attention = attention
        self.typed_early = typed_early  # letters typed before a dialog could answer go back to the draft

    def ask_approval(self, request: ev.ApprovalRequest, cwd: Path) -> None:
        def answer(decision: ev.ApprovalDecision | None) -> None:
            self.attention.answered()
            if self.activity.label == WAITING_FOR_APPROVAL:
                self.activity.set_label("working")  # the wait ends with the answer
            if request.future is not None and not request.future.done():
                request.future.set_result(decision or ev.ApprovalDecision("deny"))

        self.activity.set_label(WAITING_FOR_APPROVAL)
        if request.tool == ev.NETWORK_QUESTION:  # a sandboxed command waits on a host no list names
            self.push_screen(NetworkQuestionScreen(request, typed_early=self.typed_early), callback=answer)
            return
        self.push_screen(ApprovalScreen(request, typed_early=self.typed_early, cwd=cwd), callback=answer)

    def ask_form(self, request: ev.ElicitationRequest) -> None:
        self.push_screen(ElicitationScreen(request), callback=elicitation_answered(request))

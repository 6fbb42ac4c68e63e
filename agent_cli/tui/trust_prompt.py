"""Asking once whether to trust a folder that carries its own code (agent_cli/trust/), before the
first prompt; a yes starts the session over with the folder's servers, hooks and plugins."""

from __future__ import annotations

from typing import Any

from agent_cli.trust.gate import record_answer
from agent_cli.tui.screens.trust import TrustScreen

RESUMED_NOTE = "trusted: the folder's servers and hooks run from the next session (/new)"


def ask_trust(app: Any) -> bool:  # the AgentApp (not imported: no cycle)
    """Show the trust question when the session's folder needs one (True while it is asked)."""
    trust = getattr(app.session, "trust", None)
    if trust is None or not trust.needs_question:
        return False

    def answer(trusted: bool | None) -> None:
        record_answer(app.config, bool(trusted))
        if trusted and not app.session.history.items:  # nothing ran yet: start over with its code
            app.switch_to(app.session_factory(app.config))
        elif trusted:  # a resumed conversation is kept
            app.run_worker(app.renderer.notice(RESUMED_NOTE), group="show")
        elif line := app.session.trust.skipped_line():
            app.run_worker(app.renderer.notice(line, "warning"), group="show")
        if app.initial_prompt:
            app.send(app.initial_prompt)

    app.push_screen(TrustScreen(trust.inventory), callback=answer)
    return True

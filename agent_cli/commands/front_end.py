"""What a command may ask of the front end it was typed in, beyond the events every front end shows.

A few commands want a person at a screen: ``/memory edit ID`` opens their editor on the memory,
``/model`` alone lists the models to pick from, and ``# text`` saves a memory (as Claude Code
does). The TUI passes itself to :class:`agent_cli.commands.conversation.Conversation` as a :class:`FrontEnd`;
``agent exec`` and ``agent acp`` pass none, and those commands do there what they always did
(``/model`` names the model, ``/memory edit`` wants its text, ``# text`` is a prompt).
"""

from __future__ import annotations

from typing import Protocol


class FrontEnd(Protocol):
    @property
    def memory_shortcut(self) -> bool:
        """Whether ``# text`` saves a project memory here (the TUI's shortcut)."""
        ...

    async def edit_text(self, text: str, name: str) -> str | None:
        """``text`` opened in the user's editor (``name``: a file name for it); the text as saved,
        or None when the editor could not run (the front end said why)."""

    async def pick_model(self, current: str, choices: dict[str, str]) -> str | None:
        """One of ``choices`` (model -> where it was found), or None when the user picked none."""

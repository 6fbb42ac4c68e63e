"""A long paste shows as ``[Pasted text #2 +164 lines]`` in the composer (a wall of text hides
the draft around it); the whole text is what is sent, and Ctrl+G shows it in the editor.

Terminals send a bracketed paste with CR line ends (tmux, xterm and VTE turn each new line into
Enter's CR), some with CRLF: every paste is read with LF ends before anything else sees it.
"""

from __future__ import annotations

LONG_LINES = 10  # a paste of more lines than this is folded
LONG_CHARS = 1_000  # or of more characters


def with_lf_ends(text: str) -> str:
    """``text`` with CRLF and lone CR line ends made LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def line_count(text: str) -> int:
    """Lines as a person counts them: a last line's new line does not start another."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def is_long(text: str) -> bool:
    return line_count(text) > LONG_LINES or len(text) > LONG_CHARS


class PastedTexts:
    """The pastes folded into placeholders in one draft, by placeholder."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.count = 0  # numbers go on across drafts, as the user sees them

    def fold(self, text: str) -> str:
        self.count += 1
        tag = f"[Pasted text #{self.count} +{line_count(text)} lines]"
        self.texts[tag] = text
        return tag

    def unfold(self, draft: str) -> str:
        """The draft with every placeholder still in it replaced by its text."""
        for tag, text in self.texts.items():
            draft = draft.replace(tag, text)
        return draft

    def clear(self) -> None:
        self.texts.clear()

"""Warnings, retries, errors and neutral notices in the transcript."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

Kind = Literal["info", "warning", "error", "retry", "context"]
ICONS = {"info": "•", "warning": "⚠", "error": "✗", "retry": "↻", "context": "≡"}


class NoticeCell(Static):
    DEFAULT_CSS = """
    NoticeCell { margin: 0 0 1 0; padding: 0 1; border-left: outer $secondary; color: $text-muted; }
    NoticeCell.-warning { border-left: outer $warning; color: $text-warning; }
    NoticeCell.-error { border-left: outer $error; color: $text-error; }
    NoticeCell.-retry { border-left: outer $warning; color: $text-muted; }
    NoticeCell.-context { border-left: outer $accent; color: $text-accent; }
    NoticeCell.-info { color: $text; }
    """

    def __init__(self, text: str, kind: Kind = "info", title: str | None = None) -> None:
        head = f"{ICONS[kind]} {title}" if title else ICONS[kind]
        separator = "\n" if title and "\n" in text else " "
        super().__init__(Content.assemble((head, "bold"), separator, text.rstrip()), classes=f"-{kind}")
        self.kind = kind
        self.text = text
        self.title = title

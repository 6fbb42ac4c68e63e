"""The markdown of an answer: Textual's, with tables that fit their content (answer_table.py)
and code blocks that wrap at the transcript's width instead of being cut."""

from __future__ import annotations

from textual.widgets import Markdown

from agent_cli.tui.widgets.answer_table import AnswerTable


class AnswerMarkdown(Markdown):
    DEFAULT_CSS = """
    AnswerMarkdown MarkdownFence { overflow: hidden hidden; }
    AnswerMarkdown MarkdownFence > Label { width: 100%; text-wrap: wrap; text-overflow: fold; }
    """

    BLOCKS = {**Markdown.BLOCKS, "table_open": AnswerTable}

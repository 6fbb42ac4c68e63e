"""A markdown table in an answer: as wide as its columns (not the whole transcript), no rule
between rows, long cells wrapped instead of cut, and ``---:`` / ``:---:`` columns aligned."""

from __future__ import annotations

from textual.widgets._markdown import MarkdownBlock, MarkdownTable, MarkdownTableContent, MarkdownTH

ALIGNMENTS = {"text-align:right": "right", "text-align:center": "center", "text-align:left": "left"}


class AnswerTable(MarkdownTable):
    DEFAULT_CSS = """
    AnswerTable { width: auto; max-width: 100%; margin-bottom: 1; }
    AnswerTable MarkdownTableContent {
        grid-gutter: 0 2; keyline: none;
        & > .cell { padding: 0; text-overflow: fold; }
        & > .header { padding: 0; text-overflow: fold; text-style: bold underline; }
    }
    """

    def alignments(self) -> list[str]:
        """Each column's alignment, from the header cells' tokens (markdown-it sets a style)."""

        def headers(block: MarkdownBlock):
            for child in block._blocks:
                if isinstance(child, MarkdownTH):
                    yield child
                yield from headers(child)

        found = []
        for header in headers(self):
            style = (header._token.attrs or {}).get("style", "") if header._token is not None else ""
            found.append(ALIGNMENTS.get(str(style).replace(" ", ""), "left"))
        return found

    def on_mount(self) -> None:
        self.call_after_refresh(self.align_columns)

    def align_columns(self) -> None:
        alignments = self.alignments()
        if not alignments or all(align == "left" for align in alignments):
            return
        for content in self.query(MarkdownTableContent):
            for index, cell in enumerate(content.children):
                cell.styles.text_align = alignments[index % len(alignments)]  # type: ignore[assignment]

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        await super()._update_from_block(block)
        self.call_after_refresh(self.align_columns)  # streamed rows arrive as new cells

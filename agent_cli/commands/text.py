"""Text that remembers where each part came from, so expansion happens exactly once.

A command file's body is ``template`` text; values substituted for ``$ARGUMENTS`` / ``$1``… are
``argument`` text; an ordinary prompt is ``typed`` text; what the harness adds itself (a review
rubric, a diff) is ``literal``. Expansion looks at each piece's origin: ``` !`cmd` ``` runs only
from template or typed text, ``@path`` attaches from those and from arguments, literal text and
what expansion itself inserts (command output, file contents) are never scanned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Origin = Literal["template", "argument", "typed", "literal"]


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    origin: Origin


@dataclass(frozen=True, slots=True)
class Template:
    pieces: tuple[Piece, ...]

    @classmethod
    def typed(cls, text: str) -> Template:
        return cls((Piece(text, "typed"),))

    @property
    def text(self) -> str:
        return "".join(piece.text for piece in self.pieces)

    def origins(self) -> list[Origin]:
        """The origin of every character of :attr:`text`."""
        return [piece.origin for piece in self.pieces for _ in piece.text]

"""Parse the apply_patch envelope into operations (no file access here).

    *** Begin Patch
    *** Add File: path          then lines starting with "+"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       optional
    @@ optional context line    then hunk lines starting with " ", "-" or "+"
    *** End of File             optional: the hunk must match at the end of the file
    *** End Patch

An empty line inside a hunk is read as an empty context line (models often drop the space).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.tools.base import ToolError

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"
_UNIFIED_RANGE = re.compile(r"^-\d+(,\d+)? \+\d+(,\d+)? @@")


@dataclass(frozen=True, slots=True)
class Hunk:
    context: str | None  # text after "@@ ", a line to find before matching the hunk
    lines: tuple[tuple[str, str], ...]  # (" " | "-" | "+", text)
    end_of_file: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]


Operation = AddFile | DeleteFile | UpdateFile


class PatchSyntaxError(ToolError):
    pass


def parse_patch(text: str) -> list[Operation]:
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != BEGIN:
        raise PatchSyntaxError(f"the patch must start with '{BEGIN}'")
    if lines[-1].strip() != END:
        raise PatchSyntaxError(f"the patch must end with '{END}'")
    parser = _Parser(lines[1:-1])
    ops = parser.parse()
    if not ops:
        raise PatchSyntaxError("the patch contains no file operations")
    return ops


class _Parser:
    def __init__(self, lines: list[str]):
        self.lines = lines
        self.i = 0

    def error(self, message: str) -> PatchSyntaxError:
        return PatchSyntaxError(f"patch line {self.i + 2}: {message}")

    def parse(self) -> list[Operation]:
        ops: list[Operation] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.startswith(ADD):
                ops.append(self._add(_path(line, ADD, self)))
            elif line.startswith(DELETE):
                ops.append(DeleteFile(_path(line, DELETE, self)))
                self.i += 1
            elif line.startswith(UPDATE):
                ops.append(self._update(_path(line, UPDATE, self)))
            elif not line.strip():
                self.i += 1
            else:
                raise self.error(f"expected '{ADD}', '{DELETE}' or '{UPDATE}' followed by a path, got {line!r}")
        return ops

    def _add(self, path: str) -> AddFile:
        self.i += 1
        content: list[str] = []
        while self.i < len(self.lines) and not self.lines[self.i].startswith("*** "):
            line = self.lines[self.i]
            if not line.startswith("+"):
                raise self.error(f"every line of an added file must start with '+', got {line!r}")
            content.append(line[1:] + "\n")
            self.i += 1
        return AddFile(path, "".join(content))

    def _update(self, path: str) -> UpdateFile:
        self.i += 1
        move_to = None
        if self.i < len(self.lines) and self.lines[self.i].startswith(MOVE):
            move_to = _path(self.lines[self.i], MOVE, self)
            self.i += 1
        hunks: list[Hunk] = []
        while self.i < len(self.lines) and not _starts_operation(self.lines[self.i]):
            hunks.append(self._hunk(first=not hunks))
        if not hunks and move_to is None:
            raise self.error(f"'{UPDATE}{path}' has no hunks")
        return UpdateFile(path, move_to, tuple(hunks))

    def _hunk(self, first: bool) -> Hunk:
        line = self.lines[self.i]
        context: str | None = None
        if line.startswith("@@"):
            context = line[2:].strip() or None
            if context is not None and _UNIFIED_RANGE.match(context):
                context = None  # a unified-diff range ("@@ -1,3 +1,4 @@"), not a line to find
            self.i += 1
        elif not first:
            raise self.error(f"expected '@@' to start the next hunk, got {line!r}")
        body: list[tuple[str, str]] = []
        end_of_file = False
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.startswith("@@") or _starts_operation(line):
                break
            if line.strip() == EOF_MARK:
                end_of_file = True
                self.i += 1
                break
            if line == "":
                body.append((" ", ""))
            elif line[0] in " -+":
                body.append((line[0], line[1:]))
            else:
                raise self.error(f"hunk lines must start with ' ', '-' or '+', got {line!r}")
            self.i += 1
        if not body:
            raise self.error("empty hunk")
        return Hunk(context, tuple(body), end_of_file)


def _starts_operation(line: str) -> bool:
    return line.startswith((ADD, DELETE, UPDATE))


def _path(line: str, prefix: str, parser: _Parser) -> str:
    path = line[len(prefix) :].strip()
    if not path:
        raise parser.error(f"missing path after '{prefix.strip()}'")
    return path

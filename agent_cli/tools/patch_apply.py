"""Apply parsed hunks to a file's text (pure; no file access).

Hunks are found in order, each after the previous one. Matching is exact first, then ignoring
trailing whitespace, then ignoring surrounding whitespace. Context lines keep the file's own
text, every line keeps its own line ending, added lines get the file's usual ending (CRLF or
LF), and a file without a final newline keeps lacking one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_cli.tools.base import ToolError
from agent_cli.tools.patch_parser import Hunk

_MATCHERS: tuple[Callable[[str], str], ...] = (lambda s: s, str.rstrip, str.strip)
_SHOWN_LINES = 30  # lines of expected/actual text quoted in a mismatch error

Line = tuple[str, str]  # (text, ending: "\r\n", "\n" or "")


class HunkMismatch(ToolError):
    pass


def split_lines(text: str) -> list[Line]:
    parts = text.split("\n")
    lines: list[Line] = []
    for part in parts[:-1]:
        lines.append((part[:-1], "\r\n") if part.endswith("\r") else (part, "\n"))
    if parts[-1]:
        lines.append((parts[-1], ""))
    return lines


def usual_ending(lines: Sequence[Line]) -> str:
    crlf = sum(1 for _, end in lines if end == "\r\n")
    lf = sum(1 for _, end in lines if end == "\n")
    return "\r\n" if crlf > lf else "\n"


def apply_hunks(label: str, text: str, hunks: Sequence[Hunk]) -> str:
    lines = split_lines(text)
    keys = [line for line, _ in lines]
    eol = usual_ending(lines)
    ends_with_newline = not lines or lines[-1][1] != ""
    edits: list[tuple[int, int, tuple[tuple[str, str], ...]]] = []
    cursor = 0
    for number, hunk in enumerate(hunks, start=1):
        if hunk.context is not None:
            found = seek(keys, [hunk.context], cursor)
            if found is None:
                raise HunkMismatch(
                    f"{label}: hunk {number}: context line '@@ {hunk.context}' not found"
                    f"{f' after line {cursor}' if cursor else ''}. Re-read the file and retry."
                )
            cursor = found + 1
        body = hunk.lines
        old = hunk.old_lines
        if not old:  # pure insertion: after the context line, else at the end of the file
            at = cursor if hunk.context is not None and not hunk.end_of_file else len(keys)
            edits.append((at, 0, body))
            continue
        start = seek(keys, old, cursor, hunk.end_of_file)
        if start is None and body[-1] == (" ", ""):
            trimmed = _without_trailing_blank_context(body)
            start = seek(keys, [t for op, t in trimmed if op != "+"], cursor, hunk.end_of_file)
            if start is not None:
                body = trimmed
        if start is None:
            raise HunkMismatch(_mismatch_message(label, number, old, keys, cursor))
        count = sum(1 for op, _ in body if op != "+")
        edits.append((start, count, body))
        cursor = start + count
    new_lines = list(lines)
    # Back to front so earlier indexes stay valid; at equal starts the later hunk goes first.
    for _, (start, count, body) in sorted(enumerate(edits), key=lambda e: (e[1][0], e[0]), reverse=True):
        new_lines[start : start + count] = _replacement(lines, start, body, eol)
    return _join(new_lines, eol, ends_with_newline)


def seek(keys: Sequence[str], pattern: Sequence[str], start: int, at_end: bool = False) -> int | None:
    """Index where ``pattern`` occurs in ``keys`` at or after ``start``, loosest match last."""
    size = len(pattern)
    for norm in _MATCHERS:
        want = [norm(p) for p in pattern]

        def matches(pos: int, norm: Callable[[str], str] = norm, want: list[str] = want) -> bool:
            return all(norm(keys[pos + j]) == want[j] for j in range(size))

        if at_end and len(keys) - size >= start and matches(len(keys) - size):
            return len(keys) - size
        for pos in range(start, len(keys) - size + 1):
            if matches(pos):
                return pos
    return None


def _without_trailing_blank_context(body: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    end = len(body)
    while end > 0 and body[end - 1] == (" ", ""):
        end -= 1
    return body[:end]


def _replacement(lines: Sequence[Line], start: int, body: Sequence[tuple[str, str]], eol: str) -> list[Line]:
    out: list[Line] = []
    k = start
    for op, text in body:
        if op == " ":
            out.append(lines[k])  # the file's own text and ending
            k += 1
        elif op == "-":
            k += 1
        else:
            out.append((text, eol))
    return out


def _join(lines: list[Line], eol: str, ends_with_newline: bool) -> str:
    parts: list[str] = []
    for i, (text, end) in enumerate(lines):
        if i == len(lines) - 1:
            end = (end or eol) if ends_with_newline else ""
        elif not end:
            end = eol  # a former last line that now has lines after it
        parts.append(text + end)
    return "".join(parts)


def _mismatch_message(label: str, number: int, old: list[str], keys: Sequence[str], cursor: int) -> str:
    where = f" after line {cursor}" if cursor else ""
    msg = [f"{label}: hunk {number} does not match the file. Expected these lines{where}:"]
    msg += [f"| {line}" for line in old[:_SHOWN_LINES]]
    if len(old) > _SHOWN_LINES:
        msg.append(f"| … ({len(old) - _SHOWN_LINES} more)")
    best = _closest(keys, old)
    if best is not None:
        shown = keys[best : best + min(len(old), _SHOWN_LINES)]
        msg.append(f"The most similar lines in the file start at line {best + 1}:")
        msg += [f"| {line}" for line in shown]
    msg.append("Re-read the file with read_file and retry with exact context lines.")
    return "\n".join(msg)


def _closest(keys: Sequence[str], old: list[str]) -> int | None:
    want = [line.strip() for line in old]
    best, best_score = None, 0
    for pos in range(len(keys)):
        window = keys[pos : pos + len(want)]
        score = sum(1 for a, b in zip(window, want, strict=False) if a.strip() == b and b)
        if score > best_score:
            best, best_score = pos, score
    return best

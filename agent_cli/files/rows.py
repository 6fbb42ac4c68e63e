"""Which rows (CSV rows, JSON Lines records) to show, and how many there are, in one streaming pass.

Only the rows shown are kept. Counting runs in C-level iterators (islice, deque) and, for CSV,
in blocks of whole lines: where every line has an even number of quote characters no quoted field
runs past a line, so there is one row per line and newlines are counted; only the lines from the
first to the last odd one of a block go through the csv module, so a quoted newline stays inside
its row. This equals the csv module's count for files quoted the CSV way (RFC 4180).
"""

from __future__ import annotations

import csv
import io
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import count, islice
from typing import Any, TextIO

from agent_cli.files.view import FileReadError, Reading

_BLOCK_CHARS = 1 << 18
_MAX_OPEN_QUOTE_CHARS = 16 << 20  # a block whose quotes never balance is parsed anyway past this
_QUOTE_PAIR = re.compile(r'"[^"\n]*"')  # two quotes on one line; a quote left after removing them is odd

# Given how many of the last rows to keep: the number of rows left and the last of them.
RestCounter = Callable[[int], tuple[int, list[Any]]]


@dataclass
class Selection:
    head: list[tuple[Any, int]]  # (entry, 1-based number)
    tail: list[tuple[Any, int]]
    total: int


def _count_remaining(entries: Iterable[Any]) -> RestCounter:
    def rest(keep: int) -> tuple[int, list[Any]]:
        numbers = count()
        last = deque(zip(entries, numbers), maxlen=keep)
        return next(numbers), [entry for entry, _ in last]

    return rest


def select(entries: Iterable[Any], reading: Reading, rest: RestCounter | None = None) -> Selection:
    """Rows ``offset``..``offset + limit - 1`` when asked, else the first and last few; and the total.

    ``rest`` counts what follows the rows shown first (default: by iterating ``entries``)."""
    iterator = iter(entries)
    numbers = count(1)
    numbered = zip(iterator, numbers)  # the entry is taken first, so numbers never runs ahead at the end
    limits = reading.limits
    windowed = bool(reading.offset or reading.limit)
    if windowed:
        first = reading.offset or 1
        head = list(islice(numbered, first - 1, first - 1 + (reading.limit or limits.table_head_rows)))
    else:
        head = list(islice(numbered, limits.table_head_rows))
    seen = next(numbers) - 1
    remaining, last = (rest or _count_remaining(iterator))(0 if windowed else limits.table_tail_rows)
    first_of_last = seen + remaining - len(last) + 1
    return Selection(head, [(entry, first_of_last + i) for i, entry in enumerate(last)], seen + remaining)


def count_csv_rows(handle: TextIO, delimiter: str, keep: int) -> tuple[int, list[list[str]]]:
    """The rows from the handle's position (at a row boundary) to the end, and the last ``keep``."""
    rows = 0
    last: deque[list[str]] = deque(maxlen=keep)
    carry = ""
    while True:
        chunk = handle.read(_BLOCK_CHARS)
        text = carry + chunk
        if chunk:
            cut = text.rfind("\n") + 1
            block, carry = text[:cut], text[cut:]
            if block.count('"') % 2 and len(text) < _MAX_OPEN_QUOTE_CHARS:
                carry = text  # the block ends inside a quoted field: wait for the field's end
                continue
        else:
            block, carry = text, ""
        unpaired = _QUOTE_PAIR.sub("", block) if '"' in block else ""
        if '"' not in unpaired:
            rows += _count_lines(block, delimiter, last)
        else:  # only the lines from the first to the last with an odd number of quotes need the csv module
            start = _line_start(block, unpaired.count("\n", 0, unpaired.index('"')))
            end = _line_start(block, unpaired.count("\n", 0, unpaired.rindex('"')) + 1)
            rows += _count_lines(block[:start], delimiter, last)
            rows += _count_parsed(block[start:end], delimiter, last)
            rows += _count_lines(block[end:], delimiter, last)
        if not chunk:
            return rows, list(last)


def _count_lines(text: str, delimiter: str, last: deque[list[str]]) -> int:
    """Rows in ``text`` where no quoted field spans lines: one a line. ``last`` gets the last ones."""
    if not text:
        return 0
    if last.maxlen:
        lines = text.rsplit("\n", last.maxlen + 1)
        tail = "\n".join(lines[1:]) if len(lines) > last.maxlen + 1 else text
        last.extend(csv.reader(io.StringIO(tail, newline=""), delimiter=delimiter))
    return text.count("\n") + (not text.endswith("\n"))


def _count_parsed(text: str, delimiter: str, last: deque[list[str]]) -> int:
    """Rows in ``text`` as the csv module reads them. ``last`` gets the last ones."""
    numbers = count()
    parsed = deque(zip(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), numbers), maxlen=last.maxlen)
    last.extend(row for row, _ in parsed)
    return next(numbers)


def _line_start(text: str, line: int) -> int:
    """Where line ``line`` (0-based) of ``text`` starts; the end of ``text`` past its last line."""
    position = 0
    for _ in range(line):
        position = text.find("\n", position) + 1
        if position == 0:
            return len(text)
    return position


def render_rows(
    selection: Selection, render: Callable[[Any], str], budget: int, unit: str
) -> tuple[list[str], list[str]]:
    """The rows as ``N<TAB>text``, the first ones then the last ones, while they fit ``budget`` bytes;
    and the notes saying which were shown."""
    lines: list[str] = []
    used = 0
    shown = {"head": 0, "tail": 0}
    over_budget = False
    for part in ("head", "tail"):
        rows = getattr(selection, part)
        if part == "tail" and rows and selection.head and rows[0][1] > selection.head[-1][1] + 1 and not over_budget:
            lines.append(f"… {unit} {selection.head[-1][1] + 1:,}-{rows[0][1] - 1:,} not shown …")
        for row, number in rows:
            line = f"{number}\t{render(row)}"
            used += len(line.encode("utf-8", "replace")) + 1
            if used > budget and lines:
                over_budget = True
                break
            lines.append(line)
            shown[part] += 1
    notes = ["output budget reached"] if over_budget else []
    if note := shown_note(selection, shown["head"], shown["tail"], unit):
        notes.append(note)
    return lines, notes


def shown_note(selection: Selection, shown_head: int, shown_tail: int, unit: str) -> str | None:
    """``rows 1-20 and 99,991-100,000 of 100,000 shown; use offset/limit for others``, or None when all were."""
    ranges = [
        (entries[0][1], entries[shown - 1][1])
        for entries, shown in ((selection.head, shown_head), (selection.tail, shown_tail))
        if shown
    ]
    if not ranges or sum(last - first + 1 for first, last in ranges) == selection.total:
        return None
    spans = " and ".join(f"{first:,}-{last:,}" for first, last in ranges)
    return f"{unit} {spans} of {selection.total:,} shown; use offset/limit for others"


def past_the_end(reading: Reading, selection: Selection, unit: str) -> FileReadError:
    return FileReadError(f"offset {reading.offset} is past the end ({selection.total:,} {unit})")

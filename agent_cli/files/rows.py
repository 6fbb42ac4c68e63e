"""Which rows (CSV rows, JSON Lines records) to show, and how many there are, in one streaming pass.

Only the rows shown are kept. Counting runs in C-level iterators (islice, deque) and, for CSV,
in blocks of whole lines: when every line of a block has an even number of quote characters, no
quoted field runs past a line, so the block holds one row per line and its newlines are counted;
otherwise the block goes through the csv module, so a quoted newline stays inside its row.
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
        if '"' in block and '"' in _QUOTE_PAIR.sub("", block):
            numbers = count()
            parsed = deque(zip(csv.reader(io.StringIO(block, newline=""), delimiter=delimiter), numbers), maxlen=keep)
            rows += next(numbers)
            last.extend(row for row, _ in parsed)
        elif block:
            rows += block.count("\n") + (not block.endswith("\n"))
            if keep:
                lines = block.rsplit("\n", keep + 1)
                last.extend(csv.reader(io.StringIO("\n".join(lines[1:]) if len(lines) > keep + 1 else block),
                                       delimiter=delimiter))
        if not chunk:
            return rows, list(last)


def render_rows(selection: Selection, render: Callable[[Any], str], budget: int, unit: str) -> tuple[list[str], list[str]]:
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
    ranges = [(entries[0][1], entries[shown - 1][1])
              for entries, shown in ((selection.head, shown_head), (selection.tail, shown_tail)) if shown]
    if not ranges or sum(last - first + 1 for first, last in ranges) == selection.total:
        return None
    spans = " and ".join(f"{first:,}-{last:,}" for first, last in ranges)
    return f"{unit} {spans} of {selection.total:,} shown; use offset/limit for others"


def past_the_end(reading: Reading, selection: Selection, unit: str) -> FileReadError:
    return FileReadError(f"offset {reading.offset} is past the end ({selection.total:,} {unit})")

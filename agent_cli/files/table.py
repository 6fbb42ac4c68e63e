"""CSV and TSV: the header, the first and last rows, and the total row count, streamed.

Only the rows shown are kept, so memory stays flat whatever the file's size (see rows.py for
the count). ``offset``/``limit`` select rows.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TextIO

from agent_cli.files.rows import count_csv_rows, past_the_end, render_rows, select
from agent_cli.files.text import as_text, open_text
from agent_cli.files.view import FileView, Reading, plural

_SNIFF_CHARS = 32 * 1024
_DELIMITERS = ",;\t|"
_NOTE_RESERVE = 400  # bytes of the budget kept for the notes


@dataclass
class _Cuts:
    cells: int = 0
    columns: int = 0  # widest row's columns beyond the limit


def _sniff_delimiter(handle: TextIO) -> str:
    sample = handle.read(_SNIFF_CHARS)
    handle.seek(0)
    if len(sample) == _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _render_row(row: list[str], delimiter: str, reading: Reading, cuts: _Cuts) -> str:
    limits = reading.limits
    cuts.columns = max(cuts.columns, len(row) - limits.table_max_columns)
    cells = []
    for cell in row[: limits.table_max_columns]:
        if len(cell) > limits.max_cell_chars:
            cuts.cells += 1
            cell = cell[: limits.max_cell_chars] + f"…[+{len(cell) - limits.max_cell_chars} chars]"
        cells.append(cell)
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerow(cells)  # "\n": cells holding one get quoted
    return out.getvalue().removesuffix("\n")


def read_table(reading: Reading, tab_separated: bool) -> FileView:
    handle, encoding_note = open_text(reading.path, reading.sample, newline="")  # "": what the csv module expects
    with handle:
        delimiter = "\t" if tab_separated else _sniff_delimiter(handle)
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            header = next(reader, None)
            selection = None
            if header is not None:
                selection = select(reader, reading, lambda tail: count_csv_rows(handle, delimiter, tail))
        except csv.Error as exc:
            return as_text(reading, f"line {reader.line_num}: {exc}")
    if header is None or selection is None:
        return FileView(f"[{reading.path.name} is empty]")
    if not selection.head and not selection.tail and reading.offset:
        raise past_the_end(reading, selection, "rows")
    cuts = _Cuts()
    budget = reading.budget - _NOTE_RESERVE
    shown_delimiter = "TAB" if delimiter == "\t" else repr(delimiter)
    top = [
        f"{reading.label}: {selection.total:,} rows + header, {len(header)} columns, delimiter {shown_delimiter}",
        "header\t" + _render_row(header, delimiter, reading, cuts),
    ]
    budget -= sum(len(line.encode("utf-8", "replace")) + 1 for line in top)
    rows, notes = render_rows(selection, lambda row: _render_row(row, delimiter, reading, cuts), budget, "rows")
    if encoding_note:
        notes.append(encoding_note)
    if cuts.cells:
        notes.append(f"{plural(cuts.cells, 'cell')} cut to {reading.limits.max_cell_chars} characters")
    if cuts.columns:
        notes.append(f"{plural(cuts.columns, 'column')} after the first {reading.limits.table_max_columns} not shown")
    return FileView("\n".join(top + rows), tuple(notes))

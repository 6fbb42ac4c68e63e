"""JSON, JSON Lines, YAML and XML: as numbered lines while they fit, else a structure-preserving cut.

``offset``/``limit`` always read raw lines (records for JSON Lines). Files over ``parse_max_mb``
are not parsed: the model gets the head and the tail of the raw text. A file that does not parse
is shown as text with the parser's error.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

from agent_cli.files.detect import JSON, JSONL, XML
from agent_cli.files.json_cut import cut_json
from agent_cli.files.prune import Cuts, prune
from agent_cli.files.rows import past_the_end, render_rows, select
from agent_cli.files.text import as_text, open_text, read_text, sniff_encoding
from agent_cli.files.view import FileView, Reading
from agent_cli.files.xml_tree import parse_xml, render_xml

_NOTE_RESERVE = 400


def read_structured(reading: Reading, kind: str) -> FileView:
    if kind == JSONL:
        return read_json_lines(reading)
    if reading.offset or reading.limit or (reading.size <= reading.budget and not _has_long_line(reading)):
        return read_text(reading)
    if reading.size > reading.limits.parse_max_bytes:
        return raw_head_tail(reading)
    cuts = Cuts(reading.limits)
    try:
        body = _render_whole(reading, kind) if reading.size <= reading.budget else None
        if body is None:
            body = _render(reading, kind, cuts)
    except (ValueError, RecursionError) as exc:  # bad JSON, YAML or XML all end here as ValueErrors
        return as_text(reading, exc)
    note = cuts.note()
    shown = "shown as a structure-preserving cut" if note else "re-indented; nothing left out"
    notes = [f"{reading.label}, {reading.size:,} bytes, {shown} (use offset/limit to read raw lines)"]
    return FileView(body, (*notes, note) if note else tuple(notes))


def _has_long_line(reading: Reading) -> bool:
    """A minified file: as numbered lines it would be cut at ``max_line_chars``, so it is parsed instead."""
    handle, _ = open_text(reading.path, reading.sample)
    with handle:
        return any(len(line) > reading.limits.max_line_chars + 1 for line in handle)


def _render_whole(reading: Reading, kind: str) -> str | None:
    """A small but minified file, parsed and re-indented with nothing cut, or None when that
    no longer fits the budget."""
    limits = replace(
        reading.limits, max_array_items=sys.maxsize, max_object_keys=sys.maxsize, max_string_chars=sys.maxsize
    )
    body = _render(reading, kind, Cuts(limits))
    return body if len(body.encode("utf-8", "replace")) <= reading.budget else None


def _render(reading: Reading, kind: str, cuts: Cuts) -> str:
    if kind == XML:
        return "\n".join(render_xml(parse_xml(reading.path), cuts))
    return _render_data(reading, kind, cuts)


def _render_data(reading: Reading, kind: str, cuts: Cuts) -> str:
    handle, _ = open_text(reading.path, reading.sample)
    with handle:
        if kind == JSON:
            pruned = cut_json(handle.read(), cuts)
            text = json.dumps(pruned, indent=2, ensure_ascii=False, default=str)
            if len(text) > reading.budget:  # on one line, more of the shape fits the budget
                text = json.dumps(pruned, ensure_ascii=False, default=str)
            return text
        import yaml

        try:
            documents = list(yaml.load_all(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except yaml.YAMLError as exc:
            raise ValueError(f"invalid YAML: {exc}") from None
    pruned = [prune(document, cuts) for document in documents]
    return yaml.safe_dump_all(pruned, sort_keys=False, allow_unicode=True, width=120).rstrip("\n")


def _records(reading: Reading) -> Any:
    handle, _ = open_text(reading.path, reading.sample)
    with handle:
        yield from handle


def _render_record(line: str, reading: Reading, cuts: Cuts) -> str:
    try:
        return json.dumps(cut_json(line, cuts), ensure_ascii=False)
    except ValueError:
        return f"{line.rstrip(chr(10))[: reading.limits.max_line_chars]}  ← not valid JSON"


def read_json_lines(reading: Reading) -> FileView:
    """The first and last records (or ``offset``/``limit``), each cut like a JSON document."""
    selection = select(_records(reading), reading)
    if not selection.head and reading.offset:
        raise past_the_end(reading, selection, "records")
    if selection.total == 0:
        return FileView(f"[{reading.path.name} is empty]")
    cuts = Cuts(reading.limits)
    lines, notes = render_rows(
        selection, lambda line: _render_record(line, reading, cuts), reading.budget - _NOTE_RESERVE, "records"
    )
    if note := cuts.note():
        notes.append(note)
    return FileView("\n".join(lines), tuple(notes))


def raw_head_tail(reading: Reading) -> FileView:
    """The first and last bytes of a file too big to parse, cut at line ends where possible."""
    half = max(0, reading.budget - _NOTE_RESERVE) // 2
    encoding = sniff_encoding(reading.sample)
    with open(reading.path, "rb") as f:
        head = f.read(half)
        f.seek(max(len(head), reading.size - half))
        tail = f.read()
    head_text = _decode(head, encoding)
    tail_text = _decode(tail, encoding)
    if "\n" in head_text[len(head_text) // 2 :]:
        head_text = head_text[: head_text.rindex("\n") + 1]
    if "\n" in tail_text[: len(tail_text) // 2]:
        tail_text = tail_text[tail_text.index("\n") + 1 :]
    omitted = reading.size - len(head_text.encode(encoding, "replace")) - len(tail_text.encode(encoding, "replace"))
    body = f"{head_text.rstrip(chr(10))}\n… {omitted:,} bytes not shown …\n{tail_text}"
    limit_mb = reading.limits.parse_max_mb
    note = (
        f"{reading.label}, {reading.size:,} bytes: over {limit_mb} MB ([read_file] parse_max_mb), so not parsed; "
        "the raw head and tail are shown; use offset/limit to read lines"
    )
    return FileView(body.rstrip("\n"), (note,))


def _decode(data: bytes, encoding: str) -> str:
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    return data.decode(codec, "ignore")  # "ignore": the cut may split a character at either end

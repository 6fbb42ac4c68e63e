"""Jupyter notebooks: the cells in order with their type, source and outputs.

Text outputs are cut to ``notebook_output_chars``, images are named with their type and size
(never inlined), errors show the exception and the last ``traceback_lines`` of the traceback.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from agent_cli.files.structured import raw_head_tail
from agent_cli.files.text import as_text, open_text, read_text
from agent_cli.files.view import FileView, Reading

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TEXT_TYPES = ("text/plain", "text/markdown", "application/json", "text/latex")


def _source(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n…[output cut: {len(text) - max_chars:,} more chars]"


def _image_size(mime: str, data: Any) -> str:
    encoded = _source(data).replace("\n", "")
    size = len(encoded) * 3 // 4 - encoded[-2:].count("=")
    shown = f"{mime}, {size:,} bytes"
    if mime == "image/png":
        header = base64.b64decode(encoded[:32] + "=" * (-len(encoded[:32]) % 4), validate=False)
        if header[12:16] == b"IHDR":
            shown += f", {int.from_bytes(header[16:20], 'big')}x{int.from_bytes(header[20:24], 'big')} px"
    return shown


def _output(output: dict[str, Any], reading: Reading) -> list[str]:
    limits = reading.limits
    kind = output.get("output_type")
    if kind == "stream":
        return [
            f"[output: {output.get('name', 'stream')}]",
            _cut(_source(output.get("text")), limits.notebook_output_chars),
        ]
    if kind == "error":
        trace = [_ANSI.sub("", line) for line in output.get("traceback") or []]
        trace = "\n".join(trace).splitlines()[-limits.traceback_lines :]
        return [f"[error: {output.get('ename', '?')}: {output.get('evalue', '')}]", *trace]
    data = output.get("data") or {}
    lines = [f"[image: {_image_size(mime, value)}]" for mime, value in data.items() if mime.startswith("image/")]
    text = next((_source(data[mime]) for mime in _TEXT_TYPES if mime in data), None)
    if text is None and "text/html" in data:
        text = _source(data["text/html"])
    if text is not None:
        lines = [f"[output: {kind}]", _cut(text, limits.notebook_output_chars), *lines]
    return lines


def read_notebook(reading: Reading) -> FileView:
    if reading.offset or reading.limit:
        return read_text(reading)
    if reading.size > reading.limits.parse_max_bytes:
        return raw_head_tail(reading)
    handle, _ = open_text(reading.path, reading.sample)
    try:
        with handle:
            notebook = json.load(handle)
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError) as exc:
        return as_text(reading, repr(exc))
    kernel = (notebook.get("metadata") or {}).get("kernelspec", {}).get("name", "unknown")
    counts: dict[str, int] = {}
    lines: list[str] = []
    for index, cell in enumerate(cells, start=1):
        cell_type = cell.get("cell_type", "?")
        counts[cell_type] = counts.get(cell_type, 0) + 1
        run = f" (execution {cell['execution_count']})" if cell.get("execution_count") else ""
        lines.append(f"--- cell {index} [{cell_type}]{run} ---")
        lines.append(_source(cell.get("source")).rstrip("\n"))
        for output in cell.get("outputs") or []:
            lines += _output(output, reading)
    summary = ", ".join(f"{number} {cell_type}" for cell_type, number in counts.items())
    header = f"Jupyter notebook, kernel {kernel}: {len(cells)} cells ({summary or 'none'})"
    return FileView("\n".join([header, *lines]))

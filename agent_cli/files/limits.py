"""The thresholds of the file processors: the ``[read_file]`` config table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_lines: int = 2000  # text lines shown by default
    max_line_chars: int = 500  # longer lines are cut with a marker
    table_head_rows: int = 20  # CSV/TSV rows shown from the top...
    table_tail_rows: int = 10  # ...and from the bottom
    table_max_columns: int = 50
    max_cell_chars: int = 500
    max_depth: int = 5  # JSON/YAML/XML nesting shown
    max_array_items: int = 50
    max_object_keys: int = 50
    max_string_chars: int = 500
    parse_max_mb: int = 20  # bigger structured files show the raw head and tail
    notebook_output_chars: int = 2000  # per cell output
    traceback_lines: int = 10  # last lines of a notebook error
    archive_max_members: int = 200

    @property
    def parse_max_bytes(self) -> int:
        return self.parse_max_mb * MIB

    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None) -> ReadLimits:
        """Read the config table. Raises ValueError naming the bad key."""
        table = table or {}
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise ValueError(f"unknown key(s) in [read_file]: {', '.join(unknown)}; expected {', '.join(known)}")
        for key, value in table.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"`read_file.{key}` must be an integer >= 1, got {value!r}")
        return cls(**table)

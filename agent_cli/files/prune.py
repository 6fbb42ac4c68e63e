"""A structure-preserving cut of parsed data: the shape stays, the bulk goes, markers say how much.

Containers deeper than ``max_depth`` become a one-string summary, arrays keep their first
``max_array_items`` items, objects their first ``max_object_keys`` keys, strings their first
``max_string_chars`` characters. Each marker is a string in the data itself, so the result
renders as valid JSON or YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_cli.files.limits import ReadLimits
from agent_cli.files.view import plural

MORE_KEY = "…"


@dataclass
class Cuts:
    items: int = 0  # array items left out
    keys: int = 0  # object keys left out
    strings: int = 0  # strings shortened
    deep: int = 0  # containers replaced by a summary

    def note(self, limits: ReadLimits) -> str | None:
        parts = [
            f"{plural(self.items, 'array item')} after the first {limits.max_array_items}" if self.items else "",
            f"{plural(self.keys, 'object key')} after the first {limits.max_object_keys}" if self.keys else "",
            f"{plural(self.deep, 'container')} deeper than {limits.max_depth} levels" if self.deep else "",
            f"the ends of {plural(self.strings, 'string')} over {limits.max_string_chars} characters" if self.strings else "",
        ]
        left_out = ", ".join(part for part in parts if part)
        return f"structure cut: left out {left_out}" if left_out else None


def cut_string(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    return text[:max_chars] + f"…[+{len(text) - max_chars:,} chars]", True


def prune(value: Any, limits: ReadLimits, cuts: Cuts, depth: int = 0) -> Any:
    if isinstance(value, dict):
        if depth >= limits.max_depth and value:
            cuts.deep += 1
            return f"{{… {plural(len(value), 'key')}}}"
        entries = list(value.items())
        kept = {key: prune(item, limits, cuts, depth + 1) for key, item in entries[: limits.max_object_keys]}
        if len(entries) > limits.max_object_keys:
            cuts.keys += len(entries) - limits.max_object_keys
            kept[MORE_KEY] = f"{plural(len(entries) - limits.max_object_keys, 'more key')}"
        return kept
    if isinstance(value, list | tuple):
        if depth >= limits.max_depth and value:
            cuts.deep += 1
            return f"[… {plural(len(value), 'item')}]"
        kept_items = [prune(item, limits, cuts, depth + 1) for item in value[: limits.max_array_items]]
        if len(value) > limits.max_array_items:
            cuts.items += len(value) - limits.max_array_items
            kept_items.append(f"… {plural(len(value) - limits.max_array_items, 'more item')}")
        return kept_items
    if isinstance(value, str):
        text, was_cut = cut_string(value, limits.max_string_chars)
        cuts.strings += was_cut
        return text
    return value

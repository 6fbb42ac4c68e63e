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
    """What was left out, and the markers that say so in the data."""

    limits: ReadLimits
    items: int = 0  # array items left out
    keys: int = 0  # object keys left out
    strings: int = 0  # strings shortened
    deep: int = 0  # containers replaced by a summary

    def summary(self, is_object: bool, size: int) -> str:
        self.deep += 1
        return f"{{… {plural(size, 'key')}}}" if is_object else f"[… {plural(size, 'item')}]"

    def close_object(self, kept: dict[Any, Any], size: int) -> dict[Any, Any]:
        left_out = size - len(kept)
        if left_out > 0:
            self.keys += left_out
            kept[MORE_KEY] = plural(left_out, "more key")
        return kept

    def close_array(self, kept: list[Any], size: int) -> list[Any]:
        left_out = size - len(kept)
        if left_out > 0:
            self.items += left_out
            kept.append(f"… {plural(left_out, 'more item')}")
        return kept

    def string(self, text: str) -> str:
        cut, was_cut = cut_string(text, self.limits.max_string_chars)
        self.strings += was_cut
        return cut

    def note(self) -> str | None:
        limits = self.limits
        parts = [
            f"{plural(self.items, 'array item')} after the first {limits.max_array_items}" if self.items else "",
            f"{plural(self.keys, 'object key')} after the first {limits.max_object_keys}" if self.keys else "",
            f"{plural(self.deep, 'container')} deeper than {limits.max_depth} levels" if self.deep else "",
            f"the ends of {plural(self.strings, 'string')} over {limits.max_string_chars} characters"
            if self.strings
            else "",
        ]
        left_out = ", ".join(part for part in parts if part)
        return f"structure cut: left out {left_out}" if left_out else None


def cut_string(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    return text[:max_chars] + f"…[+{len(text) - max_chars:,} chars]", True


def prune(value: Any, cuts: Cuts, depth: int = 0) -> Any:
    limits = cuts.limits
    if isinstance(value, dict | list | tuple):
        if depth >= limits.max_depth and value:
            return cuts.summary(isinstance(value, dict), len(value))
        if isinstance(value, dict):
            entries = list(value.items())[: limits.max_object_keys]
            kept = {key: prune(item, cuts, depth + 1) for key, item in entries}
            return cuts.close_object(kept, len(value))
        items = [prune(item, cuts, depth + 1) for item in value[: limits.max_array_items]]
        return cuts.close_array(items, len(value))
    if isinstance(value, str):
        return cuts.string(value)
    return value

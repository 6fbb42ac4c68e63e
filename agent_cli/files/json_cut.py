"""The structure-preserving cut of a JSON document, built while parsing so memory stays small.

``json.load`` builds every value first, and a few bytes of JSON can become a hundred bytes of
Python objects: a 20 MB array of small objects would take gigabytes. Here only what is kept is
built; each entry left out is parsed on its own by the json module's C scanner, counted and
dropped at once, so memory follows the largest single entry, not the document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C string scanner; typeshed leaves it out
from typing import Any

from agent_cli.files.prune import Cuts

_DECODER = json.JSONDecoder()
# The value scanner JSONDecoder.__init__ makes (the C one where built); typeshed does not declare it.
_SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SPACE = " \t\n\r"
_CLOSER = {"{": "}", "[": "]"}


def cut_json(text: str, cuts: Cuts) -> Any:
    """The document in ``text``, cut by ``cuts.limits``. Raises ValueError on invalid JSON."""
    value, end = _value(text, _skip_space(text, 0), 0, cuts)
    if _skip_space(text, end) != len(text):
        raise ValueError(f"extra data after the document at char {_skip_space(text, end)}")
    return value


def _skip_space(text: str, index: int) -> int:
    if index < len(text) and text[index] in _SPACE:
        return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
    return index


def _value(text: str, index: int, depth: int, cuts: Cuts) -> tuple[Any, int]:
    opener = text[index : index + 1]
    if opener not in _CLOSER:
        value, end = _DECODER.raw_decode(text, index)
        return (cuts.string(value) if isinstance(value, str) else value), end
    is_object = opener == "{"
    limits = cuts.limits
    if depth >= limits.max_depth:
        _, size, end = _container(text, index, depth, cuts, keep=0)
        return (cuts.summary(is_object, size) if size else ({} if is_object else [])), end
    keep = limits.max_object_keys if is_object else limits.max_array_items
    kept, size, end = _container(text, index, depth, cuts, keep)
    if is_object:
        return cuts.close_object(dict(kept), size), end
    return cuts.close_array([value for _, value in kept], size), end


def _container(text: str, index: int, depth: int, cuts: Cuts, keep: int) -> tuple[list[tuple[str, Any]], int, int]:
    """The first ``keep`` entries of the object or array at ``index`` (cut), its size and its end."""
    closer = _CLOSER[text[index]]
    is_object = closer == "}"
    kept: list[tuple[str, Any]] = []
    size = 0
    index = _skip_space(text, index + 1)
    if text.startswith(closer, index):
        return kept, 0, index + 1
    while True:
        key = ""
        if is_object:
            if not text.startswith('"', index):
                raise ValueError(f"expected a key in double quotes at char {index}")
            key, index = scanstring(text, index + 1)
            index = _skip_space(text, index)
            if not text.startswith(":", index):
                raise ValueError(f"expected ':' at char {index}")
            index = _skip_space(text, index + 1)
        if size < keep:
            value, index = _value(text, index, depth + 1, cuts)
            kept.append((key, value))
        else:
            index = _scan(text, index)
        size += 1
        index = _skip_space(text, index)
        if text.startswith(closer, index):
            return kept, size, index + 1
        if not text.startswith(",", index):
            raise ValueError(f"expected ',' or '{closer}' at char {index}")
        index = _skip_space(text, index + 1)


def _scan(text: str, index: int) -> int:
    """The end of the value at ``index``, built by the C scanner and dropped at once."""
    try:
        return _SCAN_ONCE(text, index)[1]
    except StopIteration as exc:
        raise ValueError(f"expected a value at char {exc.value}") from None

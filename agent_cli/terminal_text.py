"""Text made safe to show on a terminal: no control sequence from a model, a file or a command
reaches the user's terminal (a window title, a clipboard write with OSC 52, a hyperlink, a
cleared screen). Every front end passes what it shows through here, at its output boundary;
the colours a front end adds itself are added after.

Escape sequences (CSI, OSC, DCS, APC, PM, SOS, and the two-byte ones) are removed whole; any
other control character is shown in caret notation (``^[``, ``^G``), a bidirectional control as
``<U+202E>``; a lone carriage return
becomes a new line, so text cannot be hidden by overwriting its line. Tabs and new lines stay.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, ESC[2J
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (title, clipboard, links), DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # other escapes (ESC c resets the terminal)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?"  # the 8-bit string sequences
)
# All but tab and new line; and the bidirectional controls, which reorder what is shown (a
# command in an approval question can read as another: "Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 64)
    if code > 0xFF:
        return f"<U+{code:04X}>"
    return "^?" if code == 0x7F else f"<{code:02x}>"


def terminal_safe(text: str) -> str:
    """``text`` without terminal control sequences (see the module's docstring)."""
    if not _CONTROL.search(text):  # the common case costs one scan
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub(_visible, text.replace("\r", "\n"))


def terminal_safe_value(value: Any) -> Any:
    """Strings made safe inside a value: a string, a list/tuple/dict of them, an event."""
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, (list, tuple)):
        items = [terminal_safe_value(item) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        if hasattr(value, "_fields"):  # a named tuple
            return type(value)(*items)
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        pairs = {key: terminal_safe_value(item) for key, item in value.items()}
        return value if all(pairs[key] is value[key] for key in value) else pairs
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return terminal_safe_event(value)
    return value


def terminal_safe_event(event: Any) -> Any:
    """An event (a frozen dataclass) with every string in it made safe; the same object when
    nothing needed it, so futures, identity and cost stay as they were."""
    changes = {}
    for field in dataclasses.fields(event):
        if not field.init:
            continue
        old = getattr(event, field.name)
        new = terminal_safe_value(old)
        if new is not old:
            changes[field.name] = new
    return dataclasses.replace(event, **changes) if changes else event

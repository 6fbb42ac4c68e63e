"""The keys the app understands, as `/help` lists them after the slash commands."""

from __future__ import annotations

KEYS_HELP = (
    ("enter", "send (queued while a turn runs)"),
    ("shift+enter, ctrl+j", "new line"),
    ("up, down", "walk the input history"),
    ("@", "mention a file"),
    ("/", "commands"),
    ("esc", "interrupt the running turn"),
    ("ctrl+c twice", "quit"),
    ("ctrl+p", "command palette: actions and themes"),
    ("tab, enter on a cell", "move to a tool cell, expand its output"),
)


def keys_help() -> str:
    width = max(len(keys) for keys, _ in KEYS_HELP) + 2
    return "\n".join(f"{keys.ljust(width)}{what}" for keys, what in KEYS_HELP)

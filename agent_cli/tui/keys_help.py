"""The keys the app understands, as `/help` lists them after the slash commands."""

from __future__ import annotations

KEYS_HELP = (
    ("enter", "send (queued while a turn runs)"),
    ("shift+enter, ctrl+j", "new line"),
    ("up, down", "walk the input history"),
    ("@", "mention a file"),
    ("$", "mention a skill"),
    ("/", "commands"),
    ("!", "run a shell command yourself (at the start of the composer), its output goes to the model"),
    ("?", "these keys (in an empty composer)"),
    ("esc", "interrupt the running turn"),
    ("esc esc", "on an empty composer: /rewind to an earlier prompt"),
    ("up, ctrl+s (while queued)", "edit the last queued message; send the queue now"),
    ("shift+tab", "cycle the mode: agent, ask, plan"),
    ("pageup, pagedown", "scroll the transcript"),
    ("ctrl+home, ctrl+end", "top of the transcript, back to the bottom"),
    ("ctrl+c", "clear the draft; on an empty composer twice: quit"),
    ("ctrl+d twice", "quit (on an empty composer)"),
    ("ctrl+g", "edit the draft in $VISUAL / $EDITOR"),
    ("ctrl+p", "command palette: actions and themes"),
    ("ctrl+o", "expand or collapse the newest tool output"),
    (
        "tab, enter on a cell",
        "the newest tool cell, then older ones; enter expands it (typing goes back to the composer)",
    ),
    ("y, a, n, esc", "in an approval: yes once, yes for the session, no with a reason, no"),
)


def keys_help() -> str:
    width = max(len(keys) for keys, _ in KEYS_HELP) + 2
    return "\n".join(f"{keys.ljust(width)}{what}" for keys, what in KEYS_HELP)

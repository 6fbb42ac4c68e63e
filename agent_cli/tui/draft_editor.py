"""Ctrl+G: the draft in ``$VISUAL``/``$EDITOR`` (a long prompt is easier to write there); what
the editor leaves in the file becomes the draft, which is not sent until the user presses Enter."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from textual.app import SuspendNotSupported


def editor_command() -> list[str]:
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


async def edit_draft(app: Any) -> None:
    composer = app.composer
    editor = editor_command()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prompt.md"
        draft = composer.full_text  # a folded paste in full, to edit
        path.write_text(draft + "\n" if draft else "", encoding="utf-8")
        try:
            try:
                with app.suspend():
                    code = subprocess.run([*editor, str(path)], check=False).returncode
            except SuspendNotSupported:  # no terminal to hand over (tests): run it as it is
                code = subprocess.run([*editor, str(path)], check=False, capture_output=True).returncode
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            await app.renderer.notice(f"could not run the editor {editor[0]!r}: {exc}", "error", "editor")
            return
    if code != 0:
        await app.renderer.notice(f"{editor[0]} exited with {code}; the draft is as it was", "warning", "editor")
        return
    composer.pasted.clear()
    composer.load_text(text.rstrip("\n"))
    composer.move_cursor(composer.document.end)
    composer.focus()

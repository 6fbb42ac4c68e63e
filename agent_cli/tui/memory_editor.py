"""The TUI's editor: ``$VISUAL``/``$EDITOR`` on a text, for a command that asks the front end for
one (``/memory edit ID``: commands/front_end.py's ``edit_text``). The terminal is handed to the
editor while it runs."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol


class Notices(Protocol):
    async def notice(self, text: str, kind: str = "info", title: str | None = None) -> None: ...


class EditorHost(Protocol):
    """What the editor needs of the app (tui/app.py's AgentApp): notices and the terminal."""

    @property
    def renderer(self) -> Notices: ...

    def suspend(self) -> AbstractContextManager[None]: ...


async def run_editor(app: EditorHost, text: str, name: str) -> str | None:
    """``text`` in the user's editor; what it saved (``text`` itself when the editor failed), or
    None when it could not run (said in a notice)."""
    from textual.app import SuspendNotSupported

    editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        try:
            try:
                with app.suspend():
                    code = subprocess.run([*editor, str(path)], check=False).returncode
            except SuspendNotSupported:  # no terminal to hand over (tests, web): run it as it is
                code = subprocess.run([*editor, str(path)], check=False, capture_output=True).returncode
            edited = path.read_text(encoding="utf-8")
        except OSError as exc:
            await app.renderer.notice(f"could not run the editor {editor[0]!r}: {exc}", "error", "memory")
            return None
    return edited if code == 0 else text

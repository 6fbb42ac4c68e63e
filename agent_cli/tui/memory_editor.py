"""The TUI's memory shortcuts: ``# text`` saves a project memory (as Claude Code does), and
``/memory edit ID`` opens ``$VISUAL``/``$EDITOR`` on the memory, then saves what was written
through the shared ``/memory edit ID TEXT`` command."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from agent_cli.commands.memory_command import MEMORY_OFF
from agent_cli.memory.model import MemoryError
from agent_cli.session import Session


class Notices(Protocol):
    async def notice(self, text: str, kind: str = "info", title: str | None = None) -> None: ...


class EditorHost(Protocol):
    """What the editor needs of the app (tui/app.py's AgentApp): the memory, notices, the terminal."""

    @property
    def session(self) -> Session: ...

    @property
    def renderer(self) -> Notices: ...

    def suspend(self) -> AbstractContextManager[None]: ...

    def send(self, text: str) -> None: ...


_EDIT = re.compile(r"\s*/memory\s+edit\s+(\S+)\s*\Z")


def shortcut_off_text() -> str:
    """What ``# text`` says while memory is off: it is not sent as a prompt either (the user meant to save it)."""
    return (
        f"{MEMORY_OFF}: this was not saved, and not sent to the model. "
        "To send a prompt that starts with #, begin it with a space."
    )


def shortcut_command(text: str) -> str | None:
    """``# text`` -> the ``/memory add`` command that saves it as a project memory. Only one
    line is a memory: a pasted markdown document that opens with ``# Title`` is a prompt."""
    if not text.startswith("#") or "\n" in text.strip():
        return None
    return "/memory add --scope project " + text.lstrip("#").strip()


def edit_target(text: str) -> str | None:
    """The id in ``/memory edit ID`` typed without a new text (the editor supplies it)."""
    match = _EDIT.match(text)
    return match[1] if match else None


async def edit_in_editor(app: EditorHost, ref: str) -> None:
    from textual.app import SuspendNotSupported

    book = app.session.memory
    if book is None:
        await app.renderer.notice(MEMORY_OFF, "error", "memory")
        return
    try:
        memory = book.get(ref)
    except MemoryError as exc:
        await app.renderer.notice(str(exc), "error", "memory")
        return
    editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"memory-{memory.ref}.md"
        path.write_text(memory.text + "\n", encoding="utf-8")
        try:
            try:
                with app.suspend():
                    code = subprocess.run([*editor, str(path)], check=False).returncode
            except SuspendNotSupported:  # no terminal to hand over (tests, web): run it as it is
                code = subprocess.run([*editor, str(path)], check=False, capture_output=True).returncode
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            await app.renderer.notice(f"could not run the editor {editor[0]!r}: {exc}", "error", "memory")
            return
    if code != 0 or not text or text == memory.text:
        await app.renderer.notice(f"{memory.ref} unchanged", "info", "memory")
        return
    app.send(f"/memory edit {memory.ref} {text}")

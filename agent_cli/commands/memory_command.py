"""``/memory``: list, add, forget, edit and search what the agent remembers (memory/).

``/memory edit ID TEXT`` replaces a memory's text; in the TUI, ``/memory edit ID`` alone opens
``$EDITOR`` on it (the front end's ``edit_text``, commands/front_end.py) and saves what was written.
There ``# text`` is this command's ``add`` too (:func:`shortcut_command`).
"""

from __future__ import annotations

import shlex

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative
from agent_cli.memory.book import MemoryBook
from agent_cli.memory.model import SCOPES, Memory, MemoryError

USAGE = "/memory [list [--scope S] | add [--scope S] TEXT | forget ID | edit ID TEXT | search QUERY]"
LIST_LIMIT = 50  # per scope
MEMORY_OFF = "memory is off (`memory = false`; `memory = true` in config.toml or `-c memory=true` turns it on)"


def book_of(inv: Invocation) -> MemoryBook:
    book = inv.session.memory
    if book is None:
        raise InputError(MEMORY_OFF)
    return book


def take_scope(words: list[str], default: str | None) -> tuple[str | None, list[str]]:
    """``--scope S`` (or ``--scope=S``) anywhere at the start of ``words``."""
    if words and words[0].startswith("--scope"):
        flag = words.pop(0)
        if "=" in flag:
            return flag.split("=", 1)[1], words
        if not words:
            raise InputError("--scope needs a value: session, project or user")
        return words.pop(0), words
    return default, words


def format_memory(memory: Memory) -> str:
    tags = f"  [{', '.join(memory.tags)}]" if memory.tags else ""
    text = memory.text.replace("\n", "\n        ")
    return f"  {memory.ref:<5} {text}{tags}"


def format_list(book: MemoryBook, scopes: tuple[str, ...], limit: int | None = LIST_LIMIT) -> str:
    blocks = []
    counts = book.counts()
    for scope, memories in book.newest(scopes, limit).items():
        where = book.path(scope)
        head = f"{scope} ({counts[scope]}){f' — {home_relative(where)}' if where is not None and scope != 'session' else ''}"
        lines = [format_memory(memory) for memory in memories] or ["  (none)"]
        if limit and counts[scope] > limit:
            lines.append(f"  … {counts[scope] - limit} older")
        blocks.append("\n".join([head, *lines]))
    return "\n\n".join(blocks)


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


async def memory_command(inv: Invocation) -> None:
    book = book_of(inv)
    action, _, rest = inv.args.partition(" ")
    action, rest = action.strip() or "list", rest.strip()
    try:
        if action == "list":
            scope, extra = take_scope(shlex.split(rest), None)
            if extra:
                raise InputError(f"usage: {USAGE}")
            inv.emit(ev.Notice(format_list(book, (scope,) if scope else SCOPES), title="memory"))
        elif action == "add":
            scope, words = take_scope(rest.split(" "), "project")
            saved = book.save(" ".join(words), scope or "project", source="user")
            verb = "Updated the similar memory" if saved.updated else "Saved"
            inv.emit(
                ev.Notice(f"{verb} {saved.memory.ref} ({saved.memory.scope}): {saved.memory.text}", title="memory")
            )
        elif action == "forget":
            memory = book.forget(rest)
            inv.emit(ev.Notice(f"Forgot {memory.ref}: {memory.text}", title="memory"))
        elif action == "edit":
            ref, _, text = rest.partition(" ")
            if not text.strip() and inv.front_end is not None:  # the TUI: the user's editor supplies it
                memory = book.get(ref)
                edited = await inv.front_end.edit_text(memory.text + "\n", f"memory-{memory.ref}.md")
                if edited is None:
                    return
                if not edited.strip() or edited.strip() == memory.text:
                    inv.emit(ev.Notice(f"{memory.ref} unchanged", title="memory"))
                    return
                text = edited.strip()
            if not text.strip():
                raise InputError("give the new text: /memory edit ID TEXT (the TUI opens $EDITOR for /memory edit ID)")
            memory = book.edit(ref, text)
            inv.emit(ev.Notice(f"Edited {memory.ref}: {memory.text}", title="memory"))
        elif action == "search":
            if not rest:
                raise InputError("usage: /memory search QUERY")
            found = book.search(rest)
            text = "\n".join(format_memory(item.memory) for item in found) or "no memories match"
            inv.emit(ev.Notice(text, title="memory search"))
        else:
            raise InputError(f"unknown /memory action {action!r}; usage: {USAGE}")
    except MemoryError as exc:
        raise InputError(str(exc)) from None
    except ValueError as exc:  # shlex: an unclosed quote
        raise InputError(f"/memory: {exc}") from None
    finally:
        for warning in book.take_warnings():
            inv.emit(ev.Warning(warning))

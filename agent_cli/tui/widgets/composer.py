"""The multi-line input: Enter sends, Shift+Enter or Ctrl+J adds a line, Up/Down walk the history,
``@`` completes file paths and ``/`` completes commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from agent_cli.tui.commands import SlashCommand
from agent_cli.tui.input_history import InputHistory
from agent_cli.tui.pasted_images import pasted_image_paths
from agent_cli.tui.pasted_text import PastedTexts, is_long, with_lf_ends
from agent_cli.tui.repo_files import fuzzy_filter
from agent_cli.tui.widgets.completion_menu import Completion, CompletionMenu

NEWLINE_KEYS = ("shift+enter", "ctrl+j", "alt+enter")
FILE_TOKEN = re.compile(r"(?:^|\s)@(\S*)$")
SKILL_TOKEN = re.compile(r"(?:^|\s)\$([\w-]*)$")
COMMAND_TOKEN = re.compile(r"^/([^\s/]*)$")
MENU_SIZE = 8


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 12;
        margin: 0 1;
        border: round $primary-muted;
        padding: 0 1;
        background: transparent;
    }
    Composer:focus { border: round $primary; }
    Composer.-queueing:focus { border: round $warning; }
    Composer.-shell, Composer.-shell:focus { border: round $secondary; border-title-color: $secondary; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ImagesPasted(Message):
        """A paste that named image files: they become attachment chips, not text."""

        def __init__(self, paths: list[Path]) -> None:
            super().__init__()
            self.paths = paths

    class BackspaceWhenEmpty(Message):
        """Backspace with nothing typed: removes the last attachment chip."""

    class HelpAsked(Message):
        """``?`` typed in an empty composer: show the keys."""

    def __init__(
        self,
        menu: CompletionMenu,
        input_history: InputHistory,
        commands: Callable[[], list[SlashCommand]],
        files: Callable[[], list[str]],
        skills: Callable[[], list[tuple[str, str]]] = list,
        **kwargs,
    ) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Ask anything · @ file · / commands · $ skills · ! shell · ? keys",
            **kwargs,
        )
        self.menu = menu
        self.input_history = input_history
        self.commands = commands
        self.files = files
        self.skills = skills  # (name, description) of the skills `$name` can mention
        self._loaded_from_history: str | None = None
        self._menu_for: str | None = None  # the text before the cursor the menu was computed for
        self.cwd = Path.cwd()  # where pasted relative paths start; the app sets the session's
        self.take_queued: Callable[[], str | None] | None = None  # the app's queue: Up edits its last message
        self.pasted = PastedTexts()  # long pastes, folded into placeholders until sent

    async def _on_paste(self, event: events.Paste) -> None:
        # TextArea's own paste handler is left out: it would insert the terminal's CR line ends.
        event.stop()
        event.prevent_default()
        if self.read_only:
            return
        text = with_lf_ends(event.text)
        if paths := pasted_image_paths(text, self.cwd):
            self.post_message(self.ImagesPasted(paths))
            return
        if is_long(text):
            text = self.pasted.fold(text)
        self.move_cursor(self.replace(text, *self.selection).end_location)

    # --- keys ---------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        if event.key in ("tab", "enter") and self.menu.is_open and self._menu_for != self._before_cursor():
            # Keys typed in one burst reach here before their Changed messages: the menu may
            # still be the one computed for an earlier text, so compute it for the text held now.
            self.refresh_completion()
        if self.menu.is_open and self._menu_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.character == "?" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.HelpAsked())
            return
        if event.key == "backspace" and not self.text:
            self.post_message(self.BackspaceWhenEmpty())
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "up" and not self.text and self.take_queued is not None and (queued := self.take_queued()):
            event.stop()
            event.prevent_default()
            self.load_text(queued)  # the last queued message, back for editing
            self.move_cursor(self.document.end)
            return
        if event.key in ("up", "down") and self._history_key(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _menu_key(self, key: str) -> bool:
        if key in ("up", "ctrl+p"):
            self.menu.move(-1)
        elif key in ("down", "ctrl+n"):
            self.menu.move(1)
        elif key == "escape":
            self.menu.hide()
        elif key == "enter" and self.menu.kind == "command" and self._typed_command_exists():
            self.submit()  # the whole name is typed: send it as typed, whatever is highlighted
        elif key in ("tab", "enter"):
            kind = self.menu.kind
            self.accept_completion()
            if key == "enter" and kind == "command":
                self.submit()
        else:
            return False
        return True

    def _typed_command_exists(self) -> bool:
        match = COMMAND_TOKEN.match(self._before_cursor())
        return match is not None and any(command.name == match.group(1) for command in self.commands())

    def _history_key(self, key: str) -> bool:
        row, _ = self.cursor_location
        browsing = self.input_history.browsing and self.text == self._loaded_from_history
        if key == "up" and (browsing or row == 0):
            entry = self.input_history.previous(self.text)
        elif key == "down" and (browsing or row == self.document.line_count - 1):
            entry = self.input_history.next()
        else:
            return False
        if entry is None:
            return False
        self._loaded_from_history = entry
        self.load_text(entry)
        self.move_cursor(self.document.end)
        return True

    @property
    def full_text(self) -> str:
        """The draft with its folded pastes in full: what is sent."""
        return self.pasted.unfold(self.text)

    def submit(self) -> None:
        text = self.full_text
        if not text.strip():
            return
        self.pasted.clear()
        self.input_history.add(text)
        self._loaded_from_history = None
        self.clear()
        self.menu.hide()
        self.post_message(self.Submitted(text))

    # --- completion ---------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        shell = self.text.startswith("!") and not self.text.startswith("!`")
        if shell != self.has_class("-shell"):  # `!` at the start: the line runs as a shell command
            self.set_class(shell, "-shell")
            self.border_title = "! shell command · enter runs it · the model sees its output" if shell else None
        self.refresh_completion()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if self.menu.is_open:
            self.refresh_completion()

    def _before_cursor(self) -> str:
        row, column = self.cursor_location
        return self.document.get_line(row)[:column]

    def refresh_completion(self) -> None:
        before = self._menu_for = self._before_cursor()
        row, _ = self.cursor_location
        if row == 0 and (match := COMMAND_TOKEN.match(before)):
            query = match.group(1)
            available = self.commands()
            commands = [c for c in available if c.name.startswith(query)]
            if not commands:
                names = fuzzy_filter(query, [c.name for c in available], MENU_SIZE)
                commands = [c for name in names for c in available if c.name == name]
            self.menu.show(
                "command",
                [
                    Completion(
                        "/" + c.name,
                        "/" + c.name,
                        f"{c.argument_hint}  {c.description}" if c.argument_hint else c.description,
                    )
                    for c in commands
                ],
            )
        elif match := SKILL_TOKEN.search(before):
            query = match.group(1)
            skills = self.skills()
            names = [name for name, _ in skills if name.startswith(query)] or fuzzy_filter(
                query, [name for name, _ in skills], MENU_SIZE
            )
            described = dict(skills)
            self.menu.show("skill", [Completion("$" + name, "$" + name, described.get(name, "")) for name in names])
        elif match := FILE_TOKEN.search(before):
            paths = fuzzy_filter(match.group(1), self.files(), MENU_SIZE)
            self.menu.show("file", [Completion("@" + path, path) for path in paths])
        else:
            self.menu.hide()

    def accept_completion(self) -> None:
        choice = self.menu.selected
        if choice is None:
            return
        row, column = self.cursor_location
        before = self._before_cursor()
        token = before.rsplit(None, 1)[-1] if before.strip() else ""
        self.replace(choice.value + " ", (row, column - len(token)), (row, column))
        self.menu.hide()

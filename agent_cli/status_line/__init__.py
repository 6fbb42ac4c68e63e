"""Claude Code's status line: a command of the user's that gets the session as JSON on stdin and
prints one line the TUI shows under the composer. ``setting.py`` finds the command,
``payload.py`` builds the JSON, ``runner.py`` runs it. No Textual here: the widget is the TUI's."""

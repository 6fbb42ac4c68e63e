"""The one error a slash command or an expansion raises for bad user input."""

from __future__ import annotations


class InputError(Exception):
    """The input cannot run as typed; nothing is sent to the model.

    The dispatcher turns it into an :class:`~agent_cli.events.InputRejected` event, which
    ``agent exec`` maps to exit code 2.
    """

    def __init__(self, message: str, suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.suggestions = suggestions

"""The few errors a model client raises, whatever the provider."""


class ModelError(Exception):
    """A request failed for good. The message is written for the user, in one line."""


class ContextWindowExceeded(ModelError):
    """The prompt does not fit in the model's context window.

    ``window`` is the window the server named in its error (None when it did not say).
    """

    def __init__(self, message: str, window: int | None = None):
        super().__init__(message)
        self.window = window


class TransientError(ModelError):
    """A failure worth retrying (429, 5xx, a stream cut mid-way, a connection error)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after

"""The few errors a model client raises, whatever the provider."""

from __future__ import annotations


class ModelError(Exception):
    """A request failed for good. The message is written for the user, in one line.

    ``request_id`` is the provider's id of the failed request, when it sent one (support asks
    for it); the message names it too.
    """

    request_id: str | None = None

    def with_request_id(self, request_id: str | None) -> ModelError:
        """This error, naming ``request_id`` (once) when there is one."""
        if request_id and self.request_id is None:
            self.request_id = request_id
            # A retry's reason stays short; the error that ends the request names the id.
            if not isinstance(self, TransientError) and self.args and isinstance(self.args[0], str):
                self.args = (f"{self.args[0]} [request id {request_id}]", *self.args[1:])
        return self


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

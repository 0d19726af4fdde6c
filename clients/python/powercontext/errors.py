"""Errors raised by the client. Every server error carries the API's bounded code and the request id."""

from __future__ import annotations

import builtins
from typing import Any, Dict, Optional

__all__ = [
    "PowerContextError",
    "APIError",
    "ConnectionFailedError",
    "OperationPendingError",
    "OperationFailedError",
    "ExportIncompleteError",
    "CODE_UNEXPECTED_RESPONSE",
]

#: The code of an APIError whose body was not the API's error envelope (a proxy's HTML page, say).
CODE_UNEXPECTED_RESPONSE = "unexpected_response"


class PowerContextError(Exception):
    """Base class of every error this client raises."""


class APIError(PowerContextError):
    """The server answered with an error: ``{"error": {"code", "message", "details"}}`` and an HTTP status.

    ``code`` is one of the API's bounded codes (``invalid_request``, ``operation_conflict``, ...); ``details`` is
    structured context, e.g. ``details["field"]`` for ``invalid_request``. ``request_id`` is the answer's
    X-Request-ID: quote it when reporting a problem. ``retry_after`` is the Retry-After of a 429 or 503, in seconds.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[Dict[str, Any]] = None,
        request_id: str = "",
        retry_after: Optional[float] = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details: Dict[str, Any] = dict(details or {})
        self.request_id = request_id
        self.retry_after = retry_after
        extra = []
        if self.field:
            extra.append("field " + self.field)
        if request_id:
            extra.append("request id " + request_id)
        text = f"{code}: {message}"
        if extra:
            text += " (" + ", ".join(extra) + ")"
        super().__init__(text)

    @property
    def field(self) -> str:
        """``details.field`` of an ``invalid_request`` ("" otherwise)."""
        value = self.details.get("field")
        return value if isinstance(value, str) else ""

    @property
    def temporary(self) -> bool:
        """Whether repeating the same request later may succeed (429 or 5xx)."""
        return self.status == 429 or self.status >= 500


class ConnectionFailedError(PowerContextError, builtins.ConnectionError):
    """No HTTP answer: the connection was refused, the name did not resolve, or (``timeout``) no answer in time.
    It is also a built-in ``ConnectionError``."""

    def __init__(self, url: str, reason: str, timeout: bool = False) -> None:
        self.url = url
        self.reason = reason
        self.timeout = timeout
        if timeout:
            super().__init__(f"powercontext at {url} did not answer in time: {reason}")
        else:
            super().__init__(f"cannot reach powercontext at {url}: {reason}")


class OperationPendingError(PowerContextError):
    """The operation was still not done when the operation deadline passed. It keeps running on the server:
    follow it with :meth:`Client.get_operation` or :meth:`Client.wait_operation`."""

    def __init__(self, operation_id: str, status: str, deadline: float, last_error: Optional[Exception] = None):
        self.operation_id = operation_id
        self.status = status
        self.deadline = deadline
        self.last_error = last_error
        super().__init__(f"operation {operation_id} is still {status or 'pending'} after {deadline:g}s")


class OperationFailedError(PowerContextError):
    """The operation failed or was cancelled, or (``blocked``) the flush or incubation was refused because a failed
    operation holds the scope's next window until it is retried or cancelled. ``code`` is the operation's error
    code, or ``"cancelled"``."""

    def __init__(self, operation_id: str, code: str, status: str, category: str = "", blocked: bool = False):
        self.operation_id = operation_id
        self.code = code
        self.status = status
        self.category = category
        self.blocked = blocked
        if blocked:
            text = f"blocked by failed operation {operation_id} ({code}): retry or cancel it"
        elif code == "cancelled":
            text = f"operation {operation_id} was cancelled"
        else:
            text = f"operation {operation_id} failed: {code}"
        super().__init__(text)


class ExportIncompleteError(PowerContextError):
    """An export stream ended without its trailer: the scope changed while the server read it (or the connection
    broke). Export again; what was written is not importable (docs/portability.md). ``written`` is the byte count."""

    def __init__(self, written: int) -> None:
        super().__init__("powercontext: the export stream ended without its trailer")
        self.written = written

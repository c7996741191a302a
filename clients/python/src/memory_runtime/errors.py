"""What the client raises. One base class, so ``except MemoryRuntimeError`` catches every failure
of a call: an answer outside 2xx (``status`` and, from this service, its stable ``code``), and the
two ways a call fails before any answer (timeout, connection), which carry no status."""

from __future__ import annotations

from typing import Optional


class MemoryRuntimeError(Exception):
    """A call failed. For an HTTP answer outside 2xx: ``status`` is its status, ``message`` the
    server's ``error`` text (the raw body when it was not JSON), ``code`` its stable code
    (``NOT_FOUND``, ``RATE_LIMITED``...; ``None`` when the answer had none, e.g. from a proxy)."""

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        code: Optional[str] = None,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        #: Seconds the server asked to wait before trying again (its Retry-After header), if any.
        self.retry_after = retry_after
        #: The server's X-Request-Id for this answer, to find it in the service's logs.
        self.request_id = request_id

    def __str__(self) -> str:
        if self.status is None:
            return self.message
        return f"HTTP {self.status}{f' {self.code}' if self.code else ''}: {self.message}"


class MemoryTimeoutError(MemoryRuntimeError, TimeoutError):
    """No complete answer within the client's ``timeout`` (seconds, for one attempt)."""

    def __init__(self, timeout: float, path: str) -> None:
        super().__init__(f"request to {path} timed out after {timeout:g} s")
        self.timeout = timeout


class MemoryConnectionError(MemoryRuntimeError, ConnectionError):
    """The service could not be reached, or closed the connection before a whole answer."""

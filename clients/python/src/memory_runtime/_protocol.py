"""What both clients hold and decide, beside what each method sends (_calls): the settings, the
headers of a request, how an answer becomes a result or a MemoryRuntimeError, when to retry, and
the read-your-writes position. Shared by MemoryClient and AsyncMemoryClient so the two cannot drift."""

from __future__ import annotations

import email.utils
import json
import re
import ssl
import threading
import time
from typing import Any, Optional

from ._calls import ROUTES, Call
from ._http import Answer, Origin, encode_request
from .errors import MemoryRuntimeError

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://localhost:3000"
DEFAULT_TIMEOUT = 30.0
DEFAULT_RECALL_LIMIT = 5
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY = 10.0

#: Answered by a write on PostgreSQL (the WAL position of its commit); sent with every recall so
#: a replica behind that write is not read (the server's shared/wal-position.ts).
POSITION_HEADER = "Memory-Position"
_WAL_POSITION = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")

# Answers that say "not now": the rate limit, and a service that is draining, busy, restarting
# its writer or without a PostgreSQL primary. Anything else is final.
RETRIED_STATUSES = (429, 503)

#: The 503s the service sends before the request did anything: admission control (in-flight
#: request or body caps), draining for shutdown (refused at the door, or its write never reached
#: the writer), and a consolidation run that never started. The other 503s can follow a commit —
#: WRITER_UNAVAILABLE (the writer thread died, perhaps after committing), DATABASE_UNAVAILABLE
#: (the connection lost during COMMIT) — and a 503 without a code (a proxy's) says nothing, so a
#: request that is not idempotent (remember, a message, end...) is not sent again after those:
#: it could be stored twice. A 429 is always refused at the door.
NOTHING_DONE_503_CODES = frozenset({"SERVER_BUSY", "SHUTTING_DOWN", "CONSOLIDATION_BUSY"})


def wal_position(text: str) -> Optional[int]:
    match = _WAL_POSITION.match(text)
    return None if match is None else (int(match.group(1), 16) << 32) | int(match.group(2), 16)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Retry-After in seconds, given as seconds or as an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # isdigit() alone also takes "²" (a Latin-1 header byte)
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Settings:
    """What both clients hold: where to send, how long to wait, when to retry, and the furthest
    write position seen (a lock guards it: a sync client may be shared between threads)."""

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        timeout: float,
        max_retries: int,
        max_retry_delay: float,
        ssl_context: Optional[ssl.SSLContext],
        position: Optional[str],
        namespace: Optional[str] = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout: must be a positive number of seconds")
        if max_retries < 0:
            raise ValueError("max_retries: must be 0 (no retries) or more")
        self.base_url = base_url.rstrip("/")
        self.origin = Origin.parse(self.base_url)
        if api_key is not None and any(c in api_key for c in "\r\n\0"):
            # It goes into a header line: a line break there would start another header.
            raise ValueError("api_key: must not contain line breaks or NUL")
        self.api_key = api_key
        if namespace is not None and (namespace == "" or len(namespace) > 128 or any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in namespace)):
            raise ValueError("namespace: 1 to 128 characters, no control characters")
        #: Sent as Memory-Namespace: the namespace an operator key (or auth off) acts on; a key
        #: bound to a namespace may only name its own.
        self.namespace = namespace
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_retry_delay = float(max_retry_delay)
        # Made once: loading the system trust store takes a tenth of a second, which per call
        # would also block the async client's event loop.
        self.ssl_context = ssl_context if ssl_context is not None or not self.origin.https else ssl.create_default_context()
        self._lock = threading.Lock()
        self._position: Optional[str] = None
        self.set_position(position)

    @property
    def position(self) -> Optional[str]:
        return self._position

    def set_position(self, value: Optional[str]) -> None:
        if value is not None and wal_position(value) is None:
            raise ValueError(f"position: not a WAL position (pg_lsn text such as 0/16B3748): {value!r}")
        with self._lock:
            self._position = value

    def saw(self, value: Optional[str]) -> None:
        """Keeps a write's position when it is further than any before (anything else is ignored)."""
        seen = None if value is None else wal_position(value)
        if seen is None:
            return
        with self._lock:
            if self._position is None or seen > (wal_position(self._position) or 0):
                self._position = value

    def encode(self, call: Call) -> bytes:
        headers = {"Accept": "application/json", "User-Agent": f"memory-runtime-python/{__version__}"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if self.namespace is not None:
            headers["Memory-Namespace"] = self.namespace
        payload = None
        if call.body is not None:
            headers["Content-Type"] = "application/json"
            # allow_nan=False: NaN is not JSON; refuse it here rather than send an invalid body.
            payload = json.dumps(call.body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        position = self._position
        if call.takes_position and position is not None:
            headers[POSITION_HEADER] = position
        method = ROUTES[call.operation].method
        return encode_request(self.origin, method, call.target, headers, payload)

    def result(self, call: Call, answer: Answer) -> Any:
        """The decoded JSON of a 2xx answer; anything else raised as MemoryRuntimeError."""
        self.saw(answer.headers.get(POSITION_HEADER.lower()))
        text = answer.body.decode("utf-8", errors="replace")
        request_id = answer.headers.get("x-request-id")
        if 200 <= answer.status < 300:
            try:
                return json.loads(text)
            except ValueError:
                raise MemoryRuntimeError(
                    f"{call.target}: the answer is not JSON: {text[:200]!r}", answer.status, request_id=request_id,
                ) from None
        message, code = text.strip() or f"HTTP {answer.status}", None
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            if isinstance(parsed.get("error"), str):
                message = parsed["error"]
            if isinstance(parsed.get("code"), str):
                code = parsed["code"]
        raise MemoryRuntimeError(message, answer.status, code, parse_retry_after(answer.headers.get("retry-after")), request_id)

    def retry_delay(self, call: Call, error: MemoryRuntimeError, attempt: int) -> Optional[float]:
        """Seconds to wait before attempt ``attempt + 1``, or None to give up and raise.
        The server's Retry-After is honoured exactly; one longer than ``max_retry_delay`` is not
        waited out (the caller decides, with ``error.retry_after``)."""
        if error.status not in RETRIED_STATUSES or attempt >= self.max_retries:
            return None
        if error.status == 503 and error.code not in NOTHING_DONE_503_CODES and not ROUTES[call.operation].repeatable:
            return None
        delay = error.retry_after if error.retry_after is not None else 0.5 * 2 ** attempt
        return None if delay > self.max_retry_delay else delay


"""One HTTP/1.1 exchange per call, over a blocking socket (MemoryClient) or an asyncio connection
(AsyncMemoryClient), both driving the same byte-level parser below.

Why not urllib or http.client: neither has an asyncio form, so the async client would need a
thread per call in flight; and their ``timeout`` bounds each socket operation, not the call — a
server that trickles bytes keeps a call alive far past it. Here ``timeout`` is a deadline for the
whole exchange, in both clients, and the path goes out byte for byte (no URL normalisation, which
would drop an entity named "." or "..": see _protocol.path_segment). No proxy variables are read
and no connection is kept: one connection per call (``Connection: close``), which keeps a
cancelled or timed-out call from leaving a half-read connection behind for the next one."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Dict, Optional
from urllib.parse import urlsplit

from .errors import MemoryConnectionError, MemoryTimeoutError

MAX_HEAD_BYTES = 64 * 1024
READ_SIZE = 64 * 1024


@dataclass(frozen=True)
class Origin:
    """Where requests go: scheme, host and port, and a path prefix (a service mounted under one)."""

    https: bool
    host: str
    port: int
    prefix: str

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.https else 80
        return host if self.port == default else f"{host}:{self.port}"

    @classmethod
    def parse(cls, base_url: str) -> "Origin":
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url: expected http(s)://host[:port][/prefix], got {base_url!r}")
        https = parts.scheme == "https"
        host = parts.hostname
        if not host.isascii():
            # The Host header is ASCII: an internationalised name goes as its IDNA form, the name
            # the DNS lookup and TLS use too.
            try:
                host = host.encode("idna").decode("ascii")
            except UnicodeError as error:
                raise ValueError(f"base_url: host {host!r} is not a valid internationalised domain name: {error}") from None
        return cls(https, host, parts.port or (443 if https else 80), parts.path.rstrip("/"))


@dataclass(frozen=True)
class Answer:
    status: int
    #: Lower-case names; repeated headers joined with ", ".
    headers: Dict[str, str]
    body: bytes


class ProtocolError(Exception):
    """The peer's bytes are not an HTTP/1.1 answer."""


def encode_request(origin: Origin, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]) -> bytes:
    lines = [f"{method} {origin.prefix}{target} HTTP/1.1", f"Host: {origin.host_header}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    # Latin-1 is HTTP's header charset; an API key outside it fails here, not on the wire.
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


class AnswerReader:
    """Bytes in, one answer out: status line and headers, then a body framed by Content-Length,
    by chunks, or by the end of the connection. 1xx interim answers are skipped."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._status = 0
        self._headers: Dict[str, str] = {}
        self._body = bytearray()
        self._state = "head"  # head → length | chunk-size | chunk-data | trailers | until-eof → done
        self._remaining = 0
        self.done = False

    def feed(self, data: bytes) -> None:
        self._buffer += data
        self._advance()

    def feed_eof(self) -> None:
        if self._state == "until-eof":
            self._body += self._buffer
            self._buffer.clear()
            self.done = True
        elif not self.done:
            raise ProtocolError("the connection closed before the whole answer")

    def answer(self) -> Answer:
        assert self.done
        return Answer(self._status, self._headers, bytes(self._body))

    def _advance(self) -> None:
        while not self.done:
            if self._state == "head":
                end = self._buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._buffer) > MAX_HEAD_BYTES:
                        raise ProtocolError("answer headers above 64 KiB")
                    return
                head = bytes(self._buffer[:end]).decode("latin-1")
                del self._buffer[: end + 4]
                self._read_head(head)
            elif self._state == "length":
                take = min(self._remaining, len(self._buffer))
                self._body += self._buffer[:take]
                del self._buffer[:take]
                self._remaining -= take
                if self._remaining > 0:
                    return
                self.done = True
            elif self._state == "chunk-size":
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    return
                size_text = bytes(self._buffer[:end]).split(b";", 1)[0].strip()
                del self._buffer[: end + 2]
                try:
                    self._remaining = int(size_text, 16)
                except ValueError:
                    raise ProtocolError(f"bad chunk size {size_text!r}") from None
                self._state = "chunk-data" if self._remaining > 0 else "trailers"
            elif self._state == "chunk-data":
                if len(self._buffer) < self._remaining + 2:
                    return
                self._body += self._buffer[: self._remaining]
                del self._buffer[: self._remaining + 2]
                self._state = "chunk-size"
            elif self._state == "trailers":
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    return
                del self._buffer[: end + 2]
                if end == 0:  # the empty line that ends the trailers
                    self.done = True
            else:  # until-eof
                return

    def _read_head(self, head: str) -> None:
        status_line, *header_lines = head.split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
        status = int(parts[1])
        if 100 <= status < 200:
            return  # interim answer (100 Continue...): the real one follows
        headers: Dict[str, str] = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if not sep:
                continue
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        self._status, self._headers = status, headers
        if status in (204, 304):
            self.done = True
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = "chunk-size"
        elif "content-length" in headers:
            length = headers["content-length"]
            # 1*DIGIT only: int() would also take "-5" (a body cut short) or "1_0".
            if not (length.isascii() and length.isdigit()):
                raise ProtocolError(f"bad Content-Length {length[:40]!r}")
            self._remaining = int(length)
            self._state = "length"
            if self._remaining == 0:
                self.done = True
        else:
            self._state = "until-eof"


# Errors a send may meet when the server answered early and closed (413 on a large body, for
# one): the answer may still be waiting to be read, so reading goes on.
_SEND_CUT = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


def exchange(origin: Origin, request: bytes, timeout: float, path: str, tls: Optional[ssl.SSLContext]) -> Answer:
    """One request and its answer over a blocking socket, all within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise MemoryTimeoutError(timeout, path)
        return left

    try:
        sock = socket.create_connection((origin.host, origin.port), timeout=remaining())
    except socket.timeout:
        raise MemoryTimeoutError(timeout, path) from None
    except OSError as error:
        raise MemoryConnectionError(f"cannot connect to {origin.host}:{origin.port}: {error}") from error
    try:
        if origin.https:
            sock = (tls or ssl.create_default_context()).wrap_socket(sock, server_hostname=origin.host)
        try:
            sock.settimeout(remaining())
            sock.sendall(request)
        except _SEND_CUT:
            pass
        reader = AnswerReader()
        while not reader.done:
            sock.settimeout(remaining())
            chunk = sock.recv(READ_SIZE)
            if chunk:
                reader.feed(chunk)
            else:
                reader.feed_eof()
        return reader.answer()
    except socket.timeout:
        raise MemoryTimeoutError(timeout, path) from None
    except (OSError, ProtocolError) as error:
        if isinstance(error, MemoryTimeoutError):
            raise
        raise MemoryConnectionError(f"{path}: {error}") from error
    finally:
        sock.close()


class _AnswerProtocol(asyncio.Protocol):
    """Hands each byte of one answer to an AnswerReader as it arrives. Not asyncio streams: a
    StreamReader raises a connection reset ahead of the bytes that came before it, so an answer
    the server sent and then reset the connection after (a 413 or 429 refusing a body it did not
    read) was lost; here every byte that arrived is parsed first, as the blocking client does."""

    def __init__(self) -> None:
        self.reader = AnswerReader()
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self.answer.done():
            return
        try:
            self.reader.feed(data)
        except ProtocolError as error:
            self.answer.set_exception(error)
            return
        if self.reader.done:
            self.answer.set_result(self.reader.answer())

    def eof_received(self) -> None:
        self._end(None)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._end(exc)

    def _end(self, error: Optional[Exception]) -> None:
        if self.answer.done():
            return
        if error is not None:
            self.answer.set_exception(error)
            return
        try:
            self.reader.feed_eof()
        except ProtocolError as cut:
            self.answer.set_exception(cut)
            return
        self.answer.set_result(self.reader.answer())


async def exchange_async(origin: Origin, request: bytes, timeout: float, path: str, tls: Optional[ssl.SSLContext]) -> Answer:
    """The same over an asyncio connection: cancelling the awaiting task drops the connection."""

    async def run() -> Answer:
        try:
            transport, protocol = await asyncio.get_running_loop().create_connection(
                _AnswerProtocol, origin.host, origin.port,
                ssl=(tls or ssl.create_default_context()) if origin.https else None,
                server_hostname=origin.host if origin.https else None,
            )
        except OSError as error:
            raise MemoryConnectionError(f"cannot connect to {origin.host}:{origin.port}: {error}") from error
        try:
            # A send cut by a server that answered early and closed ends in connection_lost,
            # after the bytes of its answer were parsed.
            transport.write(request)
            return await protocol.answer
        except (OSError, ProtocolError) as error:
            raise MemoryConnectionError(f"{path}: {error}") from error
        finally:
            # abort(), not close(): close() keeps the connection open until the part of the request
            # still buffered here is sent, which a timed-out or cancelled call (the server stopped
            # reading) would go on doing for as long as the server does not read. Nothing is awaited
            # here: a timeout lands in this block as a cancellation.
            transport.abort()

    try:
        return await asyncio.wait_for(run(), timeout)
    except asyncio.TimeoutError:
        raise MemoryTimeoutError(timeout, path) from None

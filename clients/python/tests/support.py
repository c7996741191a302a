"""What the tests share: where the real services are (set by test/python-client.test.ts, which
starts them), a unique name per test, and the local stand-ins for what a real service cannot be
made to do on demand (never answer, answer 503 then 200, answer in chunks)."""

from __future__ import annotations

import http.server
import os
import socket
import ssl
import struct
import threading
import time
import unittest
import uuid
from typing import Callable, List, Optional, Tuple

OPEN_URL = os.environ.get("MEMORY_RUNTIME_URL")
AUTH_URL = os.environ.get("MEMORY_RUNTIME_AUTH_URL")
API_KEYS = [key for key in os.environ.get("MEMORY_RUNTIME_API_KEYS", "").split(",") if key]
RATE_LIMIT = int(os.environ.get("MEMORY_RUNTIME_RATE_LIMIT", "0"))
MAX_BODY_BYTES = int(os.environ.get("MEMORY_RUNTIME_MAX_BODY_BYTES", "0"))
ON_POSTGRES = os.environ.get("MEMORY_RUNTIME_BACKEND") == "postgres"

HOW = "run through test/python-client.test.ts (npm test), which starts the services and sets MEMORY_RUNTIME_*"
needs_service = unittest.skipUnless(OPEN_URL and AUTH_URL and len(API_KEYS) >= 4, f"no service: {HOW}")

# The keys of the guarded service (auth on, rate limit): the first for ordinary calls, one per
# rate-limit test after it, so each spends its own budget.
KEY, LIMIT_SYNC_KEY, LIMIT_RETRY_KEY, LIMIT_ASYNC_KEY = (API_KEYS + [""] * 4)[:4]


def unique(prefix: str) -> str:
    """A name no other test (or earlier run against the same service) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class SilentServer:
    """Accepts connections and never answers: a hung network, not a fake of the API.
    ``head_only``: answers a status line and headers promising a body, then stalls."""

    def __init__(self, head_only: bool = False) -> None:
        self.head_only = head_only
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.accepted: List[socket.socket] = []
        self.closed_by_peer = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)
            if self.head_only:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"sta")
            threading.Thread(target=self._watch, args=(conn,), daemon=True).start()

    def _watch(self, conn: socket.socket) -> None:
        # Reads what the client sends; an empty read means the client closed its end.
        try:
            while conn.recv(65536):
                pass
            self.closed_by_peer.set()
        except OSError:
            self.closed_by_peer.set()

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


class DeafServer:
    """Accepts connections and reads nothing until ``read_until_closed`` is called: a server that
    stopped reading in the middle of a request body (hung, or its buffers full)."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.accepted: List[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def read_until_closed(self, seconds: float) -> Optional[int]:
        """Starts reading the first connection: the bytes received until the client's end closed,
        or None if it was still open (sending or idle) after ``seconds``."""
        if not wait_for(lambda: bool(self.accepted), seconds):
            return None
        conn, received = self.accepted[0], 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = conn.recv(1 << 20)
            except socket.timeout:
                return None
            except OSError:  # reset by the client: closed too
                return received
            if not data:
                return received
            received += len(data)
        return None

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


class EarlyAnswerServer:
    """Reads only the start of each request, sends ``answer`` (a whole answer) at once, and a
    moment later resets the connection with the rest of the request body unread: a server or
    proxy that refuses a large body (413) without reading it first. The answer came before the
    reset, so a client must still read it."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._refuse, args=(conn,), daemon=True).start()

    def _refuse(self, conn: socket.socket) -> None:
        try:
            conn.recv(1024)
            conn.sendall(self.answer)
            time.sleep(0.2)
            # SO_LINGER with a zero timeout: close() sends a reset, as a kernel does when a
            # socket is closed with received bytes still unread.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.listener.close()


Reply = Tuple[int, List[Tuple[str, str]], bytes]

# A self-signed certificate made for these tests only (openssl req -x509 ... -days 36500).
TLS_CERT = os.path.join(os.path.dirname(__file__), "tls-test.crt")
TLS_KEY = os.path.join(os.path.dirname(__file__), "tls-test.key")


class StandIn:
    """A local http.server that answers each request with the next scripted reply (status,
    headers, body), records when each request came and what it was, and ``chunked=True`` sends
    the body with Transfer-Encoding: chunked in small pieces; ``tls=True`` serves HTTPS with the
    self-signed test certificate (TLS_CERT, for 127.0.0.1 and localhost)."""

    def __init__(self, replies: List[Reply], chunked: bool = False, tls: bool = False) -> None:
        self.replies = list(replies)
        self.requests: List[Tuple[float, str, str, dict, bytes]] = []
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                stand_in.requests.append((time.monotonic(), self.command, self.path, dict(self.headers), body))
                status, headers, payload = stand_in.replies.pop(0) if stand_in.replies else (500, [], b"no more replies")
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for start in range(0, len(payload), 7):
                        piece = payload[start:start + 7]
                        self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")
                else:
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "https" if tls else "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(TLS_CERT, TLS_KEY)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        # A short poll interval: shutdown() waits for it, and tests close many stand-ins.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def json_reply(status: int, body: str, *headers: Tuple[str, str]) -> Reply:
    return status, [("Content-Type", "application/json"), *headers], body.encode("utf-8")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def spend(budget: int, call: Callable[[], object]) -> Optional[BaseException]:
    """Calls until one raises (the rate limit) and returns the error; None if none did. The bucket
    refills while this runs (one token a second at 60 per minute), so on a slow machine it takes
    more than ``budget`` calls: up to four times as many are made."""
    for _ in range(4 * budget):
        try:
            call()
        except Exception as error:  # the caller asserts what it is
            return error
    return None

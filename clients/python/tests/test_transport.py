"""How a call travels: the timeout (a deadline for the whole exchange), connection failures,
retries of 429/503 honouring Retry-After (bounded, opt-out), and the HTTP/1.1 answer framing
(Content-Length, chunked, interim 1xx, a cut connection), with local stand-ins for what the real
service cannot be made to do on demand, and a large answer from the real service."""

from __future__ import annotations

import asyncio
import ssl
import time
import unittest

from memory_runtime import AsyncMemoryClient, MemoryClient, MemoryConnectionError, MemoryRuntimeError, MemoryTimeoutError
from memory_runtime._http import AnswerReader, Origin, ProtocolError, encode_request

from .support import TLS_CERT, OPEN_URL, SilentServer, StandIn, closed_port, json_reply, needs_service, unique

OK = json_reply(200, '{"status":"ok","version":"stand-in"}')


class Timeouts(unittest.TestCase):
    def test_a_server_that_never_answers_times_out(self) -> None:
        silent = SilentServer()
        self.addCleanup(silent.close)
        client = MemoryClient(silent.url, timeout=0.2)
        started = time.monotonic()
        with self.assertRaises(MemoryTimeoutError) as caught:
            client.health()
        self.assertIsInstance(caught.exception, TimeoutError)
        self.assertIsInstance(caught.exception, MemoryRuntimeError)
        self.assertEqual((caught.exception.timeout, caught.exception.status), (0.2, None))
        self.assertIn("/v1/health", str(caught.exception))
        # A guard against hanging, not a speed check: 0.2 s asked, far less than this.
        self.assertLess(time.monotonic() - started, 10)
        # A timeout is not retried: one connection only.
        self.assertEqual(len(silent.accepted), 1)
        self.assertTrue(silent.closed_by_peer.wait(5), "the client closed the connection")

    def test_the_timeout_bounds_the_whole_answer_not_each_read(self) -> None:
        # Headers and part of the body arrive, then nothing: still a timeout, not a hang.
        stalled = SilentServer(head_only=True)
        self.addCleanup(stalled.close)
        with self.assertRaises(MemoryTimeoutError):
            MemoryClient(stalled.url, timeout=0.3).health()

    def test_nothing_listening_is_a_connection_error(self) -> None:
        client = MemoryClient(f"http://127.0.0.1:{closed_port()}", max_retries=0)
        with self.assertRaises(MemoryConnectionError) as caught:
            client.health()
        self.assertIsInstance(caught.exception, ConnectionError)
        self.assertIsNone(caught.exception.status)


class Retries(unittest.TestCase):
    def stand_in(self, *replies) -> StandIn:
        stand_in = StandIn(list(replies))
        self.addCleanup(stand_in.close)
        return stand_in

    def test_503_with_retry_after_then_200(self) -> None:
        stand_in = self.stand_in(json_reply(503, '{"error":"busy","code":"SERVER_BUSY"}', ("Retry-After", "1")), OK)
        self.assertEqual(MemoryClient(stand_in.url).health()["version"], "stand-in")
        self.assertEqual(len(stand_in.requests), 2)
        waited = stand_in.requests[1][0] - stand_in.requests[0][0]
        # Retry-After: 1 is honoured: the second request comes no sooner (sleep never returns early).
        self.assertGreaterEqual(waited, 0.95)

    def test_429_with_retry_after_as_an_http_date_in_the_past_is_retried_at_once(self) -> None:
        stand_in = self.stand_in(json_reply(429, '{"error":"slow down"}', ("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")), OK)
        self.assertEqual(MemoryClient(stand_in.url).health()["status"], "ok")
        self.assertEqual(len(stand_in.requests), 2)

    def test_without_retry_after_the_client_backs_off(self) -> None:
        stand_in = self.stand_in(json_reply(503, '{"error":"draining","code":"SHUTTING_DOWN"}'), OK)
        self.assertEqual(MemoryClient(stand_in.url).health()["status"], "ok")
        self.assertGreaterEqual(stand_in.requests[1][0] - stand_in.requests[0][0], 0.45)

    def test_retries_are_bounded(self) -> None:
        busy = json_reply(503, '{"error":"busy","code":"SERVER_BUSY"}', ("Retry-After", "0"))
        stand_in = self.stand_in(busy, busy, busy, OK)
        with self.assertRaises(MemoryRuntimeError) as caught:
            MemoryClient(stand_in.url, max_retries=2).stats()
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.retry_after), (503, "SERVER_BUSY", 0))
        self.assertEqual(len(stand_in.requests), 3)

    def test_retries_can_be_turned_off(self) -> None:
        stand_in = self.stand_in(json_reply(429, '{"error":"slow down","code":"RATE_LIMITED"}', ("Retry-After", "0")), OK)
        with self.assertRaises(MemoryRuntimeError) as caught:
            MemoryClient(stand_in.url, max_retries=0).remember("e", "f")
        self.assertEqual(caught.exception.status, 429)
        self.assertEqual(len(stand_in.requests), 1)

    def test_a_retry_after_longer_than_max_retry_delay_is_not_waited_out(self) -> None:
        stand_in = self.stand_in(json_reply(503, '{"error":"restarting","code":"WRITER_UNAVAILABLE"}', ("Retry-After", "60")), OK)
        with self.assertRaises(MemoryRuntimeError) as caught:
            MemoryClient(stand_in.url, max_retry_delay=5).health()
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("WRITER_UNAVAILABLE", 60))
        self.assertEqual(len(stand_in.requests), 1)

    def test_other_statuses_are_not_retried(self) -> None:
        for status in (400, 404, 409, 500, 502, 507):
            stand_in = self.stand_in(json_reply(status, '{"error":"no"}', ("Retry-After", "0")), OK)
            with self.assertRaises(MemoryRuntimeError):
                MemoryClient(stand_in.url).health()
            self.assertEqual(len(stand_in.requests), 1, status)

    def test_an_unreadable_retry_after_is_ignored_not_raised(self) -> None:
        # Header bytes are read as Latin-1: 0xB2 is "²", which str.isdigit() calls a digit and
        # float() refuses (a ValueError escaped the call).
        for value in ("\u00b2", "1.5", "soon"):
            stand_in = self.stand_in(json_reply(503, '{"error":"busy","code":"SERVER_BUSY"}', ("Retry-After", value)))
            with self.assertRaises(MemoryRuntimeError) as caught:
                MemoryClient(stand_in.url, max_retries=0).health()
            self.assertEqual((caught.exception.status, caught.exception.retry_after), (503, None), value)

    def test_a_write_is_not_retried_after_a_503_that_may_follow_its_commit(self) -> None:
        # WRITER_UNAVAILABLE (the writer died, perhaps after committing) and DATABASE_UNAVAILABLE
        # (the connection lost during COMMIT) can follow a stored write, and a 503 without a code
        # (a proxy's) says nothing: sent again, a write could be stored twice.
        writes = {
            "remember": lambda c: c.remember("e", "f"),
            "remember_batch": lambda c: c.remember_batch([{"entity": "e", "fact": "f"}]),
            "start_episode": lambda c: c.start_episode(["e"]),
            "import_episode": lambda c: c.import_episode(["e"], [{"role": "user", "content": "hi"}]),
            "add_message": lambda c: c.add_message("ep", "user", "hi"),
            "end_episode": lambda c: c.end_episode("ep"),
            "consolidate": lambda c: c.consolidate(),
        }
        for code in ("WRITER_UNAVAILABLE", "DATABASE_UNAVAILABLE", None):
            body = '{"error":"no"}' if code is None else '{"error":"no","code":"%s"}' % code
            for name, send in writes.items():
                stand_in = self.stand_in(json_reply(503, body, ("Retry-After", "0")), json_reply(200, "{}"))
                with self.assertRaises(MemoryRuntimeError) as caught:
                    send(MemoryClient(stand_in.url))
                self.assertEqual((caught.exception.status, caught.exception.code), (503, code), name)
                self.assertEqual(len(stand_in.requests), 1, f"{name} after {code}")

    def test_a_write_is_retried_after_a_503_sent_before_anything_was_done(self) -> None:
        # Admission control (SERVER_BUSY), draining (SHUTTING_DOWN) and a consolidation run that
        # never started (CONSOLIDATION_BUSY) refuse before the request did anything.
        for code, send in (("SERVER_BUSY", lambda c: c.remember("e", "f")), ("SHUTTING_DOWN", lambda c: c.add_message("ep", "user", "hi")),
                           ("CONSOLIDATION_BUSY", lambda c: c.consolidate())):
            stand_in = self.stand_in(json_reply(503, '{"error":"not now","code":"%s"}' % code, ("Retry-After", "0")), json_reply(200, '{"id":"x"}'))
            self.assertEqual(send(MemoryClient(stand_in.url)), {"id": "x"}, code)
            self.assertEqual(len(stand_in.requests), 2, code)

    def test_reads_and_idempotent_calls_are_retried_after_any_503(self) -> None:
        calls = {
            "health": lambda c: c.health(), "stats": lambda c: c.stats(), "recall": lambda c: c.recall("q"),
            "recall_grouped": lambda c: c.recall_grouped("q"), "inspect": lambda c: c.inspect("e"),
            "list_entities": lambda c: c.list_entities(), "memory_history": lambda c: c.memory_history("m"),
            "create_entity": lambda c: c.create_entity("e"), "forget": lambda c: c.forget("e"),
            "forget_memory": lambda c: c.forget_memory("m"), "restore_snapshot": lambda c: c.restore_snapshot("s"),
        }
        for name, send in calls.items():
            for body in ('{"error":"restarting","code":"WRITER_UNAVAILABLE"}', '{"error":"no primary","code":"DATABASE_UNAVAILABLE"}', "proxy says no"):
                stand_in = self.stand_in(json_reply(503, body, ("Retry-After", "0")), json_reply(200, "{}"))
                self.assertEqual(send(MemoryClient(stand_in.url)), {}, f"{name} after {body}")
                self.assertEqual(len(stand_in.requests), 2, f"{name} after {body}")

    def test_a_write_is_retried_after_a_429(self) -> None:
        stand_in = self.stand_in(json_reply(429, '{"error":"slow"}', ("Retry-After", "0")), json_reply(201, '{"id":"x"}'))
        self.assertEqual(MemoryClient(stand_in.url).add_message("ep", "user", "hi"), {"id": "x"})
        self.assertEqual(len(stand_in.requests), 2)

    def test_a_retried_request_is_sent_again_whole(self) -> None:
        stand_in = self.stand_in(json_reply(429, '{"error":"slow"}', ("Retry-After", "0")), json_reply(201, '{"id":"x"}'))
        MemoryClient(stand_in.url, api_key="k").remember("e", "the fact")
        (_, _, path1, headers1, body1), (_, _, path2, headers2, body2) = stand_in.requests
        self.assertEqual((path1, headers1.get("Authorization"), body1), (path2, headers2.get("Authorization"), body2))


class Https(unittest.TestCase):
    def test_https_with_a_given_trust_store_and_refused_without(self) -> None:
        stand_in = StandIn([OK, OK, OK], tls=True)
        self.addCleanup(stand_in.close)
        trusted = ssl.create_default_context(cafile=TLS_CERT)
        self.assertEqual(MemoryClient(stand_in.url, ssl_context=trusted).health()["version"], "stand-in")
        self.assertEqual(asyncio.run(AsyncMemoryClient(stand_in.url, ssl_context=trusted).health())["version"], "stand-in")
        # The system trust store does not know the test certificate: no answer is accepted.
        with self.assertRaises(MemoryConnectionError):
            MemoryClient(stand_in.url, max_retries=0).health()
        with self.assertRaises(MemoryConnectionError):
            asyncio.run(AsyncMemoryClient(stand_in.url, max_retries=0).health())
        self.assertEqual(len(stand_in.requests), 2)


class Framing(unittest.TestCase):
    def test_a_chunked_answer(self) -> None:
        stand_in = StandIn([json_reply(200, '{"memories":[{"content":"chunk ' + "é" * 40 + '"}],"contradictions":[]}')], chunked=True)
        self.addCleanup(stand_in.close)
        answer = MemoryClient(stand_in.url).recall("q")
        self.assertEqual(answer["memories"][0]["content"], "chunk " + "é" * 40)

    def test_byte_by_byte_with_an_interim_answer(self) -> None:
        raw = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 11\r\n\r\n{\"id\":\"ab\"}")
        reader = AnswerReader()
        for i in range(len(raw)):
            self.assertFalse(reader.done)
            reader.feed(raw[i:i + 1])
        self.assertTrue(reader.done)
        answer = reader.answer()
        self.assertEqual((answer.status, answer.headers["x-a"], answer.body), (201, "1, 2", b'{"id":"ab"}'))

    def test_an_answer_read_to_the_end_of_the_connection(self) -> None:
        reader = AnswerReader()
        reader.feed(b"HTTP/1.1 200 OK\r\n\r\n{\"a\":")
        reader.feed(b"1}")
        self.assertFalse(reader.done)
        reader.feed_eof()
        self.assertEqual(reader.answer().body, b'{"a":1}')

    def test_a_cut_answer_and_garbage_are_protocol_errors(self) -> None:
        cut = AnswerReader()
        cut.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}")
        with self.assertRaises(ProtocolError):
            cut.feed_eof()
        for garbage in (b"SSH-2.0-OpenSSH\r\n\r\n", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"):
            with self.assertRaises(ProtocolError):
                AnswerReader().feed(garbage)

    def test_the_host_header_of_an_internationalised_domain_is_its_ascii_form(self) -> None:
        # The Host header is ASCII on the wire (IDNA), as the socket's DNS lookup and TLS SNI use.
        for base_url, host in (("http://bücher.example:8080", "xn--bcher-kva.example:8080"),
                               ("https://例え.jp/memory", "xn--r8jz45g.jp"), ("http://[::1]:3000", "[::1]:3000")):
            request = encode_request(Origin.parse(base_url), "GET", "/v1/health", {}, None)
            self.assertIn(f"\r\nHost: {host}\r\n".encode("ascii"), request, base_url)

    def test_a_content_length_that_is_not_digits_is_a_protocol_error(self) -> None:
        # Python's int() also reads "-5", "+5" and "1_0": a negative length cut the body short
        # (bytes[:-5]) and was taken for a whole answer.
        for length in (b"-5", b"+5", b"1_0", b"0x5"):
            with self.assertRaises(ProtocolError, msg=length):
                AnswerReader().feed(b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\n\r\n{\"a\":1234}")

    @needs_service
    def test_a_large_answer_from_the_service(self) -> None:
        client = MemoryClient(OPEN_URL)
        entity = unique("py-large")
        facts = [f"large fact {i}: " + ("lorem ipsum dolor sit amet " * 300) for i in range(20)]
        for fact in facts:
            client.remember(entity, fact)
        answer = client.inspect(entity, limit=20)
        self.assertEqual(sorted(m["content"] for m in answer["semantic"]), sorted(facts))


if __name__ == "__main__":
    unittest.main()

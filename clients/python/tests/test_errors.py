"""Error mapping: every answer outside 2xx is a MemoryRuntimeError carrying the HTTP status, the
server's error text as ``message`` and its stable ``code`` — 400/401/404/413/422/429 from the real
service (the guarded one has API keys, a 60-per-minute rate limit and a 64 KiB body limit)."""

from __future__ import annotations

import unittest

from memory_runtime import MemoryClient, MemoryRuntimeError

from .support import (
    AUTH_URL, KEY, LIMIT_RETRY_KEY, LIMIT_SYNC_KEY, MAX_BODY_BYTES, OPEN_URL, RATE_LIMIT, StandIn, json_reply,
    needs_service, spend, unique,
)


@needs_service
class ServiceErrors(unittest.TestCase):
    def assert_error(self, call, status: int, code: str, field: str = "") -> MemoryRuntimeError:
        with self.assertRaises(MemoryRuntimeError) as caught:
            call()
        error = caught.exception
        self.assertEqual((error.status, error.code), (status, code), str(error))
        self.assertIsInstance(error.message, str)
        self.assertIn(field, error.message)
        self.assertIn(str(status), str(error))
        self.assertTrue(error.request_id, "the answer's X-Request-Id is kept")
        return error

    def test_400_a_value_out_of_range_names_the_field(self) -> None:
        client = MemoryClient(OPEN_URL)
        self.assert_error(lambda: client.remember("e", "f", confidence=3), 400, "INVALID_VALUE", "confidence")
        self.assert_error(lambda: client.recall_grouped("q", order="sideways"), 400, "INVALID_VALUE", "order")  # type: ignore[arg-type]
        self.assert_error(lambda: client.create_entity("x", "robot"), 400, "INVALID_VALUE", "kind")  # type: ignore[arg-type]
        self.assert_error(lambda: client.recall("q", limit=0), 400, "INVALID_VALUE", "limit")

    def test_401_without_or_with_a_wrong_key(self) -> None:
        self.assert_error(lambda: MemoryClient(AUTH_URL).health(), 401, "UNAUTHORIZED")
        self.assert_error(lambda: MemoryClient(AUTH_URL, api_key="nope").remember("e", "f"), 401, "UNAUTHORIZED")

    def test_404_unknown_entity_and_episode(self) -> None:
        client = MemoryClient(OPEN_URL)
        self.assert_error(lambda: client.inspect(unique("py-nobody")), 404, "NOT_FOUND")
        self.assert_error(lambda: client.add_message("00000000-0000-4000-8000-000000000000", "user", "hi"), 404, "NOT_FOUND")
        self.assert_error(lambda: client.end_episode("00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")

    def test_404_on_an_ended_episode(self) -> None:
        client = MemoryClient(OPEN_URL)
        episode = client.start_episode([unique("py-ended")])["episode_id"]
        client.end_episode(episode)
        self.assert_error(lambda: client.add_message(episode, "user", "too late"), 404, "NOT_FOUND")

    def test_413_a_body_above_the_limit(self) -> None:
        client = MemoryClient(AUTH_URL, api_key=KEY)
        self.assertGreater(MAX_BODY_BYTES, 0)
        error = self.assert_error(lambda: client.remember("e", "x" * (MAX_BODY_BYTES + 1)), 413, "BODY_TOO_LARGE")
        self.assertIsNone(error.retry_after)
        # Nothing was stored, and the client (and service) go on as before.
        self.assertEqual(client.health()["status"], "ok")

    def test_422_a_missing_field_or_a_wrong_json_type(self) -> None:
        client = MemoryClient(OPEN_URL)
        self.assert_error(lambda: client.recall(123), 422, "MALFORMED_BODY", "query")  # type: ignore[arg-type]
        self.assert_error(lambda: client.remember("e", None), 422, "MALFORMED_BODY", "fact")  # type: ignore[arg-type]
        self.assert_error(lambda: client.add_message("ep", "user", ["not", "text"]), 422, "MALFORMED_BODY", "content")  # type: ignore[arg-type]

    def test_429_over_the_rate_limit_with_retry_after(self) -> None:
        client = MemoryClient(AUTH_URL, api_key=LIMIT_SYNC_KEY, max_retries=0)
        error = spend(RATE_LIMIT, client.health)
        self.assertIsInstance(error, MemoryRuntimeError, "the rate limit was never reached")
        assert isinstance(error, MemoryRuntimeError)
        self.assertEqual((error.status, error.code), (429, "RATE_LIMITED"))
        self.assertIsNotNone(error.retry_after)
        self.assertGreaterEqual(error.retry_after or 0, 1)

    def test_a_real_429_is_retried_after_its_retry_after(self) -> None:
        # Spend the key's budget without retries, then the same call with retries goes through:
        # the server's Retry-After (1 s at 60/min) is waited out and a token has come back.
        hasty = MemoryClient(AUTH_URL, api_key=LIMIT_RETRY_KEY, max_retries=0)
        error = spend(RATE_LIMIT, hasty.health)
        self.assertIsInstance(error, MemoryRuntimeError)
        self.assertEqual(getattr(error, "status", None), 429)
        patient = MemoryClient(AUTH_URL, api_key=LIMIT_RETRY_KEY)
        self.assertEqual(patient.health()["status"], "ok")


class AnswersFromElsewhere(unittest.TestCase):
    """A proxy or load balancer in front of the service answers in its own words."""

    def test_a_non_json_error_keeps_the_raw_text_and_has_no_code(self) -> None:
        stand_in = StandIn([(502, [("Content-Type", "text/html")], b"<h1>Bad Gateway</h1>"), (500, [], b"")])
        self.addCleanup(stand_in.close)
        client = MemoryClient(stand_in.url)
        with self.assertRaises(MemoryRuntimeError) as caught:
            client.health()
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.message), (502, None, "<h1>Bad Gateway</h1>"))
        with self.assertRaises(MemoryRuntimeError) as caught:
            client.health()
        self.assertEqual((caught.exception.status, caught.exception.message), (500, "HTTP 500"))

    def test_a_2xx_that_is_not_json_is_an_error(self) -> None:
        stand_in = StandIn([(200, [("Content-Type", "text/html")], b"<html>captive portal</html>")])
        self.addCleanup(stand_in.close)
        with self.assertRaises(MemoryRuntimeError) as caught:
            MemoryClient(stand_in.url).stats()
        self.assertEqual(caught.exception.status, 200)
        self.assertIn("not JSON", caught.exception.message)

    def test_json_error_without_a_code(self) -> None:
        stand_in = StandIn([json_reply(404, '{"error":"no such thing"}')])
        self.addCleanup(stand_in.close)
        with self.assertRaises(MemoryRuntimeError) as caught:
            MemoryClient(stand_in.url).stats()
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.message), (404, None, "no such thing"))


if __name__ == "__main__":
    unittest.main()

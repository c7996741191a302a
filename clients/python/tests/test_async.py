"""AsyncMemoryClient: the same methods and conventions as MemoryClient, as coroutines, against the
real service; its own timeout, cancellation, retries and many calls in flight on one loop."""

from __future__ import annotations

import asyncio
import inspect
import unittest

from memory_runtime import AsyncMemoryClient, MemoryClient, MemoryConnectionError, MemoryRuntimeError, MemoryTimeoutError, types

from .shapes import assert_shape
from .support import (
    AUTH_URL, KEY, LIMIT_ASYNC_KEY, MAX_BODY_BYTES, OPEN_URL, RATE_LIMIT, DeafServer, EarlyAnswerServer, SilentServer,
    StandIn, closed_port, json_reply, needs_service, unique,
)


class SameSurface(unittest.TestCase):
    def test_every_public_method_of_the_sync_client_is_a_coroutine_with_the_same_signature(self) -> None:
        names = sorted(n for n, v in vars(MemoryClient).items() if callable(v) and not n.startswith("_"))
        self.assertEqual(names, sorted(n for n, v in vars(AsyncMemoryClient).items() if callable(v) and not n.startswith("_")))
        for name in names:
            method = getattr(AsyncMemoryClient, name)
            self.assertTrue(inspect.iscoroutinefunction(method), name)
            sync_params = inspect.signature(getattr(MemoryClient, name)).parameters
            async_params = inspect.signature(method).parameters
            self.assertEqual([(p.name, p.default, p.kind) for p in sync_params.values()],
                             [(p.name, p.default, p.kind) for p in async_params.values()], name)


class AsyncCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        # These cases run the loop in debug mode, which reports any step over 0.1 s as slow; on a
        # loaded CI machine that is noise, not a finding about the client.
        asyncio.get_running_loop().slow_callback_duration = 5.0


@needs_service
class AgainstTheService(AsyncCase):
    async def test_every_endpoint(self) -> None:
        client = AsyncMemoryClient(OPEN_URL)
        entity = unique("py-async")
        assert_shape(self, await client.health(), types.HealthResponse)
        assert_shape(self, await client.create_entity(entity, "tool"), types.Entity)
        stored = await client.remember(entity, "The async tool prefers small batches", confidence=0.7)
        assert_shape(self, stored, types.StoredFact)
        found = await client.recall("small batches", entity=entity, types=["semantic"], explain=True)
        assert_shape(self, found, types.RecallResponse)
        self.assertEqual(found["memories"][0]["id"], stored["id"])

        episode = (await client.start_episode([entity]))["episode_id"]
        self.assertEqual(await client.add_message(episode, "user", "I work from Reykjavik on Fridays"), {"status": "ok"})
        assert_shape(self, await client.end_episode(episode, "partial"), types.EndEpisodeResponse)
        grouped = await client.recall_grouped("Reykjavik", order="relevance", max_groups=2)
        assert_shape(self, grouped, types.RecallGroupedResponse)
        self.assertIn(episode, [g["session_id"] for g in grouped["groups"]])

        inspected = await client.inspect(entity, limit=10)
        assert_shape(self, inspected, types.InspectResponse)
        self.assertEqual(inspected["episodic"][0]["content"], "I work from Reykjavik on Fridays")
        assert_shape(self, await client.stats(), types.StatsResponse)
        assert_shape(self, await client.consolidate(), types.ConsolidateResponse)
        listed = await client.list_entities(q=entity)
        self.assertEqual([e["name"] for e in listed["entities"]], [entity])

        forgotten = await client.forget(entity, hard_delete=True)
        assert_shape(self, forgotten, types.ForgetResponse)
        snapshot_id = forgotten["snapshot"]["snapshot_id"]
        self.assertIn(snapshot_id, [s["snapshot_id"] for s in (await client.list_snapshots())["snapshots"]])
        restored = await client.restore_snapshot(snapshot_id)
        self.assertEqual(restored["restored_count"], forgotten["forgotten_count"])

    async def test_errors_carry_status_and_code(self) -> None:
        cases = [
            (lambda: AsyncMemoryClient(OPEN_URL).inspect(unique("py-async-nobody")), 404, "NOT_FOUND"),
            (lambda: AsyncMemoryClient(OPEN_URL).remember("e", "f", confidence=-1), 400, "INVALID_VALUE"),
            (lambda: AsyncMemoryClient(OPEN_URL).recall(None), 422, "MALFORMED_BODY"),  # type: ignore[arg-type]
            (lambda: AsyncMemoryClient(AUTH_URL).stats(), 401, "UNAUTHORIZED"),
            (lambda: AsyncMemoryClient(AUTH_URL, api_key=KEY).remember("e", "y" * (MAX_BODY_BYTES + 1)), 413, "BODY_TOO_LARGE"),
        ]
        for call, status, code in cases:
            with self.assertRaises(MemoryRuntimeError) as caught:
                await call()
            self.assertEqual((caught.exception.status, caught.exception.code), (status, code))

    async def test_429_then_a_retrying_client_gets_through(self) -> None:
        hasty = AsyncMemoryClient(AUTH_URL, api_key=LIMIT_ASYNC_KEY, max_retries=0)
        # All at once on one loop: the burst spends the key's budget (twice over, for the tokens
        # that come back while a slow machine works through it).
        results = await asyncio.gather(*(hasty.health() for _ in range(2 * RATE_LIMIT)), return_exceptions=True)
        refused = [r for r in results if isinstance(r, MemoryRuntimeError)]
        self.assertTrue(refused, "the rate limit was never reached")
        self.assertTrue(all((e.status, e.code) == (429, "RATE_LIMITED") and (e.retry_after or 0) >= 1 for e in refused), refused[:3])
        patient = AsyncMemoryClient(AUTH_URL, api_key=LIMIT_ASYNC_KEY)
        self.assertEqual((await patient.health())["status"], "ok")

    async def test_many_calls_in_flight_on_one_loop(self) -> None:
        client = AsyncMemoryClient(OPEN_URL)
        entity = unique("py-gather")
        await asyncio.gather(*(client.remember(entity, f"gathered fact {i}") for i in range(10)))
        answers = await asyncio.gather(*(client.recall(f"gathered fact {i}", entity=entity, limit=20) for i in range(20)))
        self.assertTrue(all(len(a["memories"]) == 10 for a in answers))


class Transport(AsyncCase):
    async def test_timeout(self) -> None:
        silent = SilentServer()
        self.addCleanup(silent.close)
        with self.assertRaises(MemoryTimeoutError) as caught:
            await AsyncMemoryClient(silent.url, timeout=0.2).health()
        self.assertIsInstance(caught.exception, TimeoutError)
        self.assertEqual(len(silent.accepted), 1)

    async def test_cancelling_a_call_closes_its_connection(self) -> None:
        silent = SilentServer()
        self.addCleanup(silent.close)
        task = asyncio.ensure_future(AsyncMemoryClient(silent.url).health())
        while not silent.accepted:
            await asyncio.sleep(0.01)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        closed = await asyncio.get_running_loop().run_in_executor(None, silent.closed_by_peer.wait, 5)
        self.assertTrue(closed, "the connection was left open")

    async def test_an_answer_sent_before_a_reset_is_read(self) -> None:
        # The server refuses the body after its first bytes, answers 413 whole, then resets the
        # connection: both clients report the 413, not the reset that followed it.
        refusal = b'{"error":"body above 1024 bytes","code":"BODY_TOO_LARGE"}'
        early = EarlyAnswerServer(b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(refusal), refusal))
        self.addCleanup(early.close)
        fact = "x" * (8 * 1024 * 1024)  # more than the socket buffers take: the client is still sending
        for call in (lambda: asyncio.get_running_loop().run_in_executor(None, MemoryClient(early.url).remember, "e", fact),
                     lambda: AsyncMemoryClient(early.url).remember("e", fact)):
            with self.assertRaises(MemoryRuntimeError) as caught:
                await call()
            self.assertEqual((caught.exception.status, caught.exception.code), (413, "BODY_TOO_LARGE"), repr(caught.exception))

    async def test_a_timed_out_call_stops_sending_its_body(self) -> None:
        # The server stopped reading; once the call has timed out, its connection is closed and
        # the rest of the body is dropped, not held in memory and sent on whenever the server reads.
        deaf = DeafServer()
        self.addCleanup(deaf.close)
        fact = "x" * (32 * 1024 * 1024)
        with self.assertRaises(MemoryTimeoutError):
            await AsyncMemoryClient(deaf.url, timeout=0.3).remember("e", fact)
        # The loop keeps running (as an application's would) while the server starts reading.
        received = await asyncio.get_running_loop().run_in_executor(None, deaf.read_until_closed, 10)
        self.assertIsNotNone(received, "the timed-out call left its connection open")
        self.assertLess(received or 0, len(fact), "the timed-out call went on sending its whole body")

    async def test_connection_refused(self) -> None:
        with self.assertRaises(MemoryConnectionError):
            await AsyncMemoryClient(f"http://127.0.0.1:{closed_port()}").health()

    async def test_retry_after_then_200(self) -> None:
        stand_in = StandIn([json_reply(503, '{"error":"busy","code":"SERVER_BUSY"}', ("Retry-After", "1")),
                            json_reply(200, '{"status":"ok","version":"v"}')])
        self.addCleanup(stand_in.close)
        self.assertEqual((await AsyncMemoryClient(stand_in.url).health())["version"], "v")
        self.assertEqual(len(stand_in.requests), 2)
        self.assertGreaterEqual(stand_in.requests[1][0] - stand_in.requests[0][0], 0.95)

    async def test_which_503s_are_retried(self) -> None:
        # As the sync client: a write is not sent again after a 503 that may follow its commit;
        # a read is, and a write after a 503 sent before anything was done.
        cases = (
            ("remember", '{"error":"restarting","code":"WRITER_UNAVAILABLE"}', 1),
            ("remember", '{"error":"busy","code":"SERVER_BUSY"}', 2),
            ("recall", '{"error":"restarting","code":"WRITER_UNAVAILABLE"}', 2),
        )
        for method, body, requests in cases:
            stand_in = StandIn([json_reply(503, body, ("Retry-After", "0")), json_reply(200, "{}")])
            self.addCleanup(stand_in.close)
            client = AsyncMemoryClient(stand_in.url)
            send = client.remember("e", "f") if method == "remember" else client.recall("q")
            if requests == 1:
                with self.assertRaises(MemoryRuntimeError):
                    await send
            else:
                self.assertEqual(await send, {})
            self.assertEqual(len(stand_in.requests), requests, (method, body))

    async def test_no_retry_when_turned_off(self) -> None:
        stand_in = StandIn([json_reply(429, '{"error":"slow"}', ("Retry-After", "0")), json_reply(200, "{}")])
        self.addCleanup(stand_in.close)
        with self.assertRaises(MemoryRuntimeError):
            await AsyncMemoryClient(stand_in.url, max_retries=0).stats()
        self.assertEqual(len(stand_in.requests), 1)

    async def test_a_chunked_answer(self) -> None:
        stand_in = StandIn([json_reply(200, '{"groups":[{"session_id":null}]}')], chunked=True)
        self.addCleanup(stand_in.close)
        self.assertEqual(await AsyncMemoryClient(stand_in.url).recall_grouped("q"), {"groups": [{"session_id": None}]})


if __name__ == "__main__":
    unittest.main()

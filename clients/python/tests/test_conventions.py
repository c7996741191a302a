"""The spec's client conventions (§4) against the real service: Bearer key when configured, 30 s
default timeout, recall limit 5 by default, a boolean delete flag, entity names of any UTF-8 as
one path segment; and the read-your-writes position (PostgreSQL) the TypeScript client keeps."""

from __future__ import annotations

import inspect
import unittest

from memory_runtime import (
    DEFAULT_RECALL_LIMIT, DEFAULT_TIMEOUT, AsyncMemoryClient, MemoryClient, MemoryRuntimeError,
)

from .support import AUTH_URL, KEY, ON_POSTGRES, OPEN_URL, StandIn, json_reply, needs_service, unique

# Names that would change the path if they were not encoded as exactly one segment.
AWKWARD_NAMES = [
    "a/b", "../x", "who?", "hash#tag", "with space", "100%", "plus+sign", ".", "..", "...", "%2E", "./..",
    "名前", "emoji 🧠", "semi;colon", "back\\slash", "tab\tname", "quote\"s", "amp&eq=",
]


class Defaults(unittest.TestCase):
    def test_documented_defaults(self) -> None:
        client = MemoryClient()
        self.assertEqual((client.base_url, client.timeout), ("http://localhost:3000", 30.0))
        self.assertEqual((DEFAULT_TIMEOUT, DEFAULT_RECALL_LIMIT), (30.0, 5))
        for cls in (MemoryClient, AsyncMemoryClient):
            params = inspect.signature(cls).parameters
            self.assertEqual([(n, params[n].default) for n in ("base_url", "api_key", "timeout")],
                             [("base_url", "http://localhost:3000"), ("api_key", None), ("timeout", 30.0)])
            signature = {name: inspect.signature(getattr(cls, name)).parameters for name in ("recall", "recall_grouped", "forget", "inspect")}
            self.assertEqual(signature["recall"]["limit"].default, 5)
            self.assertEqual((signature["recall_grouped"]["limit"].default, signature["recall_grouped"]["order"].default), (50, "chronological"))
            self.assertIs(signature["forget"]["hard_delete"].default, False)
            self.assertIsNone(signature["inspect"]["limit"].default)

    def test_the_version_is_the_package_version(self) -> None:
        import re
        from pathlib import Path

        import memory_runtime

        pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
        declared = re.search(r'^version = "([^"]+)"$', pyproject, re.MULTILINE)
        self.assertEqual(memory_runtime.__version__, declared.group(1) if declared else None)

    def test_bad_settings_are_refused_at_construction(self) -> None:
        for kwargs in ({"base_url": "localhost:3000"}, {"base_url": "ftp://host"}, {"timeout": 0}, {"max_retries": -1}, {"position": "not-a-position"},
                       {"api_key": "k\r\nX-Injected: 1"}):
            with self.assertRaises(ValueError, msg=kwargs):
                MemoryClient(**kwargs)

    def test_a_single_string_is_not_taken_for_a_list_of_participants(self) -> None:
        with self.assertRaises(TypeError):
            MemoryClient(OPEN_URL or "http://localhost:3000").start_episode("alice")  # type: ignore[arg-type]


@needs_service
class AgainstTheService(unittest.TestCase):
    def test_recall_limit_defaults_to_5(self) -> None:
        client = MemoryClient(OPEN_URL)
        entity = unique("py-limit")
        for i in range(7):
            client.remember(entity, f"limit default fact {i}")
        self.assertEqual(len(client.recall("limit default fact", entity=entity)["memories"]), 5)

    def test_sends_the_api_key_as_a_bearer_header(self) -> None:
        self.assertEqual(MemoryClient(AUTH_URL, api_key=KEY).health()["status"], "ok")
        for client in (MemoryClient(AUTH_URL), MemoryClient(AUTH_URL, api_key="wrong-key")):
            with self.assertRaises(MemoryRuntimeError) as caught:
                client.stats()
            self.assertEqual((caught.exception.status, caught.exception.code), (401, "UNAUTHORIZED"))

    def test_any_utf8_entity_name_is_one_path_segment(self) -> None:
        client = MemoryClient(OPEN_URL)
        prefix = unique("py-name")
        for name in AWKWARD_NAMES:
            entity = f"{name}" if name in (".", "..", "...", "%2E", "./..") else f"{prefix}{name}"
            client.remember(entity, f"fact of {entity!r}")
            self.assertEqual(client.inspect(entity)["entity"], entity)
            forgotten = client.forget(entity)
            self.assertEqual(forgotten["forgotten_count"], 1, entity)
            self.assertEqual(forgotten["snapshot"]["memory_count"], 1, entity)
            # The entity itself went too: forgetting it again is an unknown entity.
            with self.assertRaises(MemoryRuntimeError, msg=f"{entity!r} is gone") as again:
                client.forget(entity)
            self.assertEqual(again.exception.status, 404)

    def test_episode_ids_are_path_segments_too(self) -> None:
        client = MemoryClient(OPEN_URL)
        # "." and ".." must reach the episode routes (unknown episode, 404), not /v1/episodes/message.
        for episode in (".", "..", "a/b", "x?y"):
            for call in (lambda: client.add_message(episode, "user", "hi"), lambda: client.end_episode(episode)):
                with self.assertRaises(MemoryRuntimeError) as caught:
                    call()
                self.assertEqual((caught.exception.status, caught.exception.code), (404, "NOT_FOUND"), episode)

    def test_delete_takes_a_boolean_flag_and_both_values_delete_with_a_snapshot(self) -> None:
        client = MemoryClient(OPEN_URL)
        for hard in (False, True):
            entity = unique("py-flag")
            client.remember(entity, "flagged fact")
            forgotten = client.forget(entity, hard)
            self.assertEqual((forgotten["forgotten_count"], forgotten["snapshot"]["memory_count"]), (1, 1))

    def test_one_client_shared_between_threads(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        client = MemoryClient(OPEN_URL)
        entity = unique("py-threads")
        with ThreadPoolExecutor(max_workers=8) as pool:
            stored = list(pool.map(lambda i: client.remember(entity, f"threaded fact {i}")["id"], range(16)))
            found = list(pool.map(lambda _: client.recall("threaded fact", entity=entity, limit=20), range(8)))
        self.assertEqual(len(set(stored)), 16)
        self.assertTrue(all({m["id"] for m in answer["memories"]} == set(stored) for answer in found))

    def test_position_is_kept_from_writes_and_sent_with_recalls(self) -> None:
        client = MemoryClient(OPEN_URL)
        entity = unique("py-position")
        client.remember(entity, "a positioned fact")
        if not ON_POSTGRES:
            self.assertIsNone(client.position, "SQLite names no position")
            return
        first = client.position
        self.assertRegex(first or "", r"^[0-9A-F]{1,8}/[0-9A-F]{1,8}$")
        client.remember(entity, "a later fact")
        self.assertNotEqual(client.position, first)
        # Another client started from this one's position sees the write at once.
        follower = MemoryClient(OPEN_URL, position=client.position)
        self.assertEqual(len(follower.recall("positioned fact", entity=entity, limit=10)["memories"]), 2)


class PositionBookkeeping(unittest.TestCase):
    """What goes on the wire, read by a local stand-in: only it can see the request headers."""

    def test_recalls_carry_the_furthest_position_seen_and_writes_none(self) -> None:
        stand_in = StandIn([
            json_reply(201, '{"id":"1"}', ("Memory-Position", "0/A0")),
            json_reply(201, '{"id":"2"}', ("Memory-Position", "0/9F")),  # behind: kept at 0/A0
            json_reply(200, '{"memories":[],"contradictions":[]}'),
            json_reply(200, '{"groups":[]}'),
            json_reply(201, '{"id":"3"}', ("Memory-Position", "garbled")),
            json_reply(200, '{"memories":[],"contradictions":[]}'),
        ])
        self.addCleanup(stand_in.close)
        client = MemoryClient(stand_in.url, api_key="k")
        client.remember("e", "f")
        client.remember("e", "g")
        self.assertEqual(client.position, "0/A0")
        client.recall("q")
        client.recall_grouped("q")
        client.remember("e", "h")
        client.position = None
        client.recall("q")
        sent = [(method, path, headers.get("Memory-Position")) for _, method, path, headers, _ in stand_in.requests]
        self.assertEqual(sent, [
            ("POST", "/v1/remember", None), ("POST", "/v1/remember", None), ("POST", "/v1/recall", "0/A0"),
            ("POST", "/v1/recall_grouped", "0/A0"), ("POST", "/v1/remember", None), ("POST", "/v1/recall", None),
        ])
        self.assertTrue(all(headers.get("Authorization") == "Bearer k" for _, _, _, headers, _ in stand_in.requests))

    def test_bodies_leave_out_what_the_caller_did_not_give(self) -> None:
        import json
        stand_in = StandIn([json_reply(200, "{}") for _ in range(6)])
        self.addCleanup(stand_in.close)
        client = MemoryClient(stand_in.url)
        client.create_entity("n")
        client.remember("e", "f")
        client.inspect("e")
        client.end_episode("ep")
        client.recall("q", types=("semantic",))
        client.forget("e")
        bodies = [(path, json.loads(body) if body else None) for _, _, path, _, body in stand_in.requests]
        self.assertEqual(bodies, [
            ("/v1/entities", {"name": "n"}), ("/v1/remember", {"entity": "e", "fact": "f"}),
            ("/v1/inspect", {"entity": "e"}), ("/v1/episodes/ep/end", {}),
            ("/v1/recall", {"query": "q", "entity": None, "limit": 5, "types": ["semantic"]}),
            ("/v1/entities/e?hard_delete=false", None),
        ])


if __name__ == "__main__":
    unittest.main()

"""Every endpoint through MemoryClient against the real service, each answer checked against the
TypedDict its method returns."""

from __future__ import annotations

import unittest

from memory_runtime import MemoryClient, MemoryRuntimeError, types

from .shapes import assert_shape
from .support import OPEN_URL, needs_service, unique


@needs_service
class EveryEndpoint(unittest.TestCase):
    def setUp(self) -> None:
        self.client = MemoryClient(OPEN_URL)

    def test_health(self) -> None:
        answer = self.client.health()
        assert_shape(self, answer, types.HealthResponse)
        self.assertEqual(answer["status"], "ok")

    def test_create_entity_defaults_to_user_and_returns_the_existing_one(self) -> None:
        name = unique("py-create")
        created = self.client.create_entity(name)
        assert_shape(self, created, types.Entity)
        self.assertEqual((created["name"], created["kind"]), (name, "user"))
        self.assertEqual(self.client.create_entity(name)["id"], created["id"])
        agent = self.client.create_entity(unique("py-agent"), "agent")
        self.assertEqual(agent["kind"], "agent")

    def test_remember_and_recall(self) -> None:
        entity = unique("py-remember")
        stored = self.client.remember(entity, "Oskar keeps bees on his allotment")
        assert_shape(self, stored, types.StoredFact)
        self.assertEqual((stored["memory_type"], stored["confidence"]), ("semantic", 0.8))
        sure = self.client.remember(entity, "Oskar sells honey at the market", confidence=0.95)
        self.assertEqual(sure["confidence"], 0.95)

        found = self.client.recall("bees allotment", entity=entity)
        assert_shape(self, found, types.RecallResponse)
        self.assertEqual(found["memories"][0]["id"], stored["id"])
        self.assertEqual(found["contradictions"], [])
        only_episodic = self.client.recall("bees allotment", entity=entity, types=["episodic"])
        self.assertEqual(only_episodic["memories"], [])
        one = self.client.recall("honey bees", entity=entity, limit=1)
        self.assertEqual(len(one["memories"]), 1)

    def test_recall_reports_contradictions(self) -> None:
        entity = unique("py-contra")
        # Valid from the same moment: supersession cannot decide, so recall reports the pair.
        at = "2024-01-01T00:00:00Z"
        berlin = self.client.remember(entity, f"{entity} lives in Berlin", valid_from=at)
        madrid = self.client.remember(entity, f"{entity} lives in Madrid", valid_from=at)
        found = self.client.recall("where does it live", entity=entity, limit=10)
        assert_shape(self, found, types.RecallResponse)
        self.assertEqual(len(found["contradictions"]), 1, found)
        self.assertEqual(sorted(found["contradictions"][0]["memory_ids"]), sorted([berlin["id"], madrid["id"]]))

    def test_a_later_fact_supersedes_and_as_of_finds_the_earlier(self) -> None:
        entity = unique("py-time")
        berlin = self.client.remember(entity, f"{entity} lives in Berlin", valid_from="2021-01-01T00:00:00Z")
        madrid = self.client.remember(entity, f"{entity} lives in Madrid", valid_from="2022-01-01T00:00:00Z")
        now = self.client.recall("where does it live", entity=entity)
        assert_shape(self, now, types.RecallResponse)
        self.assertEqual([m["id"] for m in now["memories"]], [madrid["id"]])
        then = self.client.recall("where does it live", entity=entity, as_of="2021-06-01T00:00:00Z")
        self.assertEqual([m["id"] for m in then["memories"]], [berlin["id"]])
        both = self.client.recall("where does it live", entity=entity, include_superseded=True)
        old = next(m for m in both["memories"] if m["id"] == berlin["id"])
        self.assertEqual(old["superseded_by"], madrid["id"])
        self.assertEqual(len(self.client.inspect(entity, include_superseded=True)["semantic"]), 2)
        history = self.client.memory_history(berlin["id"])
        assert_shape(self, history, types.MemoryHistoryResponse)
        self.assertEqual([m["id"] for m in history["chain"]], [berlin["id"], madrid["id"]])
        self.assertIn("superseded", [e["event"] for e in history["events"]])
        # Retracting the current value makes the previous one current again.
        retracted = self.client.forget_memory(madrid["id"])
        assert_shape(self, retracted, types.ForgetResponse)
        self.assertEqual(retracted["forgotten_count"], 1)
        again = self.client.recall("where does it live", entity=entity)
        self.assertEqual([(m["id"], m["superseded_by"]) for m in again["memories"]], [(berlin["id"], None)])

    def test_bulk_import_and_batch(self) -> None:
        entity = unique("py-bulk")
        imported = self.client.import_episode([entity], [
            {"role": "user", "content": "I keep bees on my allotment", "occurred_at": "2023-05-08T10:00:00Z"},
            {"role": "assistant", "content": "Lovely", "occurred_at": "2023-05-08T10:01:00Z"},
        ], started_at="2023-05-08T10:00:00Z")
        assert_shape(self, imported, types.ImportEpisodeResponse)
        batch = self.client.remember_batch([{"entity": entity, "fact": "owns a kayak"}, {"entity": entity}])
        assert_shape(self, batch, types.RememberBatchResponse)
        self.assertEqual((batch["stored"], batch["failed"]), (1, 1))
        self.assertEqual(batch["results"][1]["error"]["field"], "facts[1].fact")

    def test_recall_explain(self) -> None:
        entity = unique("py-explain")
        self.client.remember(entity, "Greta collects vintage typewriters")
        found = self.client.recall("typewriters", entity=entity, explain=True)
        assert_shape(self, found, types.RecallResponse)
        explanation = found["memories"][0]["explanation"]
        # The contributions add up to the score the ranking used (the schema's promise).
        self.assertAlmostEqual(explanation["score"], sum(s["contribution"] for s in explanation["signals"]), places=6)
        self.assertNotIn("explanation", self.client.recall("typewriters", entity=entity)["memories"][0])

    def test_episode_lifecycle_and_recall_grouped(self) -> None:
        person = unique("py-episode")
        started = self.client.start_episode([person, "py-support-bot"])
        assert_shape(self, started, types.StartEpisodeResponse)
        episode = started["episode_id"]
        ok = self.client.add_message(episode, "user", "I moved to Trondheim in March")
        assert_shape(self, ok, types.StatusResponse)
        self.client.add_message(episode, "assistant", "Noted, Trondheim it is")
        ended = self.client.end_episode(episode, "success")
        assert_shape(self, ended, types.EndEpisodeResponse)
        self.assertGreaterEqual(ended["memories_created"], 1)

        grouped = self.client.recall_grouped("Trondheim")
        assert_shape(self, grouped, types.RecallGroupedResponse)
        ours = [g for g in grouped["groups"] if g["session_id"] == episode]
        self.assertEqual(len(ours), 1, grouped)
        contents = [m["content"] for m in ours[0]["memories"]]
        self.assertEqual(contents[:2], ["I moved to Trondheim in March", "Noted, Trondheim it is"])

        by_relevance = self.client.recall_grouped("Trondheim", limit=10, order="relevance", max_groups=1, explain=True)
        self.assertEqual(len(by_relevance["groups"]), 1)
        self.assertIn("explanation", by_relevance["groups"][0]["memories"][0])

    def test_end_episode_without_outcome(self) -> None:
        episode = self.client.start_episode([unique("py-plain")])["episode_id"]
        self.client.add_message(episode, "user", "hello there")
        self.assertIsInstance(self.client.end_episode(episode)["memories_created"], int)

    def test_inspect(self) -> None:
        entity = unique("py-inspect")
        for i in range(3):
            self.client.remember(entity, f"inspect fact number {i}")
        episode = self.client.start_episode([entity])["episode_id"]
        self.client.add_message(episode, "user", "an episodic line")
        everything = self.client.inspect(entity)
        assert_shape(self, everything, types.InspectResponse)
        self.assertEqual(everything["entity"], entity)
        self.assertEqual(len(everything["semantic"]), 3)
        self.assertEqual(everything["episodic"][0]["episode_id"], episode)
        self.assertEqual(len(self.client.inspect(entity, limit=2)["semantic"]) + len(self.client.inspect(entity, limit=2)["episodic"]), 2)

    def test_stats_count_what_was_stored(self) -> None:
        before = self.client.stats()
        assert_shape(self, before, types.StatsResponse)
        self.client.remember(unique("py-stats"), "a fact to count")
        after = self.client.stats()
        self.assertEqual(after["namespace"], "default")
        self.assertEqual(after["entities"], before["entities"] + 1)
        self.assertEqual(after["semantic_memories"], before["semantic_memories"] + 1)

    def test_a_namespace_option_acts_on_that_namespace(self) -> None:
        # The open service (auth off) honours Memory-Namespace: what one namespace stores, another does not see.
        name = unique("py-ns")
        scoped = MemoryClient(OPEN_URL, namespace=name)
        self.assertEqual(scoped.stats()["semantic_memories"], 0)
        scoped.remember("ns-entity", "a fact only this namespace holds")
        self.assertEqual(scoped.stats(), {"namespace": name, "entities": 1, "episodic_memories": 0, "semantic_memories": 1, "procedural_memories": 0})
        self.assertNotIn("a fact only this namespace holds", str(self.client.recall("fact only this namespace holds", limit=50)))
        listed = {n["namespace"]: n for n in self.client.list_namespaces()["namespaces"]}
        self.assertEqual(listed[name]["semantic_memories"], 1)
        page = self.client.list_namespaces(limit=1, offset=1)
        self.assertEqual(len(page["namespaces"]), 1)
        self.assertGreaterEqual(page["total"], 2)
        with self.assertRaises(ValueError):
            MemoryClient(OPEN_URL, namespace="")

    def test_consolidate(self) -> None:
        answer = self.client.consolidate()
        assert_shape(self, answer, types.ConsolidateResponse)

    def test_forget_with_snapshot_then_restore(self) -> None:
        entity = unique("py-forget")
        self.client.remember(entity, "a fact to forget")
        self.client.remember(entity, "another fact to forget")
        forgotten = self.client.forget(entity)
        assert_shape(self, forgotten, types.ForgetResponse)
        self.assertEqual(forgotten["forgotten_count"], 2)
        snapshot = forgotten["snapshot"]
        self.assertEqual((snapshot["memory_count"], snapshot["semantic_count"]), (2, 2))
        self.assertEqual(self.client.recall("fact to forget", entity=entity)["memories"], [])

        # The entity went with its memories: it is unknown now, until the restore brings it back.
        with self.assertRaises(MemoryRuntimeError) as again:
            self.client.forget(entity)
        self.assertEqual(again.exception.status, 404)
        self.assertNotIn(entity, [e["name"] for e in self.client.list_entities(q=entity)["entities"]])

        listed = self.client.list_snapshots()
        assert_shape(self, listed, types.ListSnapshotsResponse)
        mine = [s for s in listed["snapshots"] if s["snapshot_id"] == snapshot["snapshot_id"]]
        self.assertEqual(len(mine), 1)
        self.assertEqual((mine[0]["entity"], mine[0]["memory_count"], mine[0]["problem"]), (entity, 2, None))

        restored = self.client.restore_snapshot(snapshot["snapshot_id"])
        assert_shape(self, restored, types.RestoreResponse)
        self.assertEqual((restored["entity"], restored["restored_count"]), (entity, 2))
        self.assertEqual(len(self.client.inspect(entity)["semantic"]), 2)
        self.assertEqual(self.client.restore_snapshot(snapshot["snapshot_id"])["already_present_count"], 2)

    def test_restore_of_an_unknown_snapshot_is_404(self) -> None:
        with self.assertRaises(MemoryRuntimeError) as caught:
            self.client.restore_snapshot("00000000-0000-4000-8000-000000000000")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "SNAPSHOT_NOT_FOUND"))

    def test_list_entities_pages_and_filters(self) -> None:
        marker = unique("py-list")
        for suffix in ("a", "b", "c"):
            self.client.remember(f"{marker}-{suffix}", "listed")
        page = self.client.list_entities(q=marker.upper(), limit=2)
        assert_shape(self, page, types.ListEntitiesResponse)
        self.assertEqual(page["total"], 3)
        self.assertEqual([e["name"] for e in page["entities"]], [f"{marker}-a", f"{marker}-b"])
        rest = self.client.list_entities(q=marker, limit=2, offset=2)
        self.assertEqual([e["name"] for e in rest["entities"]], [f"{marker}-c"])
        self.assertEqual(rest["entities"][0]["memory_count"], 1)
        self.assertGreaterEqual(self.client.list_entities()["total"], 3)

    def test_list_episodes_of_an_entity(self) -> None:
        entity = unique("py-episodes")
        imported = self.client.import_episode([entity, "assistant"], [{"role": "user", "content": "hello"}],
                                              started_at="2023-05-08T10:00:00Z", outcome="success")
        page = self.client.list_episodes(entity=entity, limit=5)
        assert_shape(self, page, types.ListEpisodesResponse)
        self.assertEqual(page["total"], 1)
        episode = page["episodes"][0]
        self.assertEqual((episode["episode_id"], episode["participants"], episode["outcome"], episode["message_count"]),
                         (imported["episode_id"], [entity, "assistant"], "success", 1))
        self.assertEqual(episode["started_at"], "2023-05-08T10:00:00.000Z")


if __name__ == "__main__":
    unittest.main()

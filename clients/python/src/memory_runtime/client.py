"""MemoryClient: the service's REST API as blocking calls (safe to share between threads)."""

from __future__ import annotations

import ssl
import time
from typing import Any, Dict, Optional, Sequence

from . import _calls as calls
from ._calls import Call
from ._http import exchange
from ._protocol import DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY, DEFAULT_RECALL_LIMIT, DEFAULT_TIMEOUT, Settings
from .errors import MemoryRuntimeError
from .types import (
    ConsolidateResponse, EndEpisodeResponse, Entity, EntityKind, ForgetResponse, GroupOrder, HealthResponse,
    InspectResponse, ListEntitiesResponse, ListEpisodesResponse, ListNamespacesResponse, ListSnapshotsResponse, MemoryType, Outcome, RecallGroupedResponse,
    RecallResponse, RestoreResponse, StartEpisodeResponse, StatsResponse, StatusResponse, StoredFact,
    ImportEpisodeResponse, MemoryHistoryResponse, RememberBatchResponse,
)


class MemoryClient:
    """A client of one memory service.

    ``timeout`` (seconds) bounds each attempt of a call, from connecting to the last byte of the
    answer. A 429 or 503 answer is retried up to ``max_retries`` times (0: never), after the
    server's Retry-After when it gives one (at most ``max_retry_delay`` seconds; a longer one is
    raised at once with ``error.retry_after``), else after 0.5 s, 1 s, 2 s... A call that is not
    idempotent (remember, a message, end...) is sent again after a 503 only when its code says
    nothing was done (SERVER_BUSY, SHUTTING_DOWN, CONSOLIDATION_BUSY), never twice stored.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        namespace: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        ssl_context: Optional[ssl.SSLContext] = None,
        position: Optional[str] = None,
    ) -> None:
        self._settings = Settings(base_url, api_key, timeout, max_retries, max_retry_delay, ssl_context, position, namespace)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    @property
    def timeout(self) -> float:
        return self._settings.timeout

    @property
    def position(self) -> Optional[str]:
        """PostgreSQL: the furthest write position seen in this client's answers (None: none yet,
        or SQLite). Recalls carry it, so they see this client's writes even on a replica or
        another node; hand it to another client (``position=``) to give it the same guarantee."""
        return self._settings.position

    @position.setter
    def position(self, value: Optional[str]) -> None:
        self._settings.set_position(value)

    def health(self) -> HealthResponse:
        return self._send(calls.health())

    def create_entity(self, name: str, kind: Optional[EntityKind] = None) -> Entity:
        """Creates the entity, or returns the existing one of that name (kind defaults to "user")."""
        return self._send(calls.create_entity(name, kind))

    def remember(self, entity: str, fact: str, confidence: Optional[float] = None, valid_from: Optional[str] = None) -> StoredFact:
        """Stores a semantic memory (confidence defaults to 0.8; valid_from, ISO 8601 with offset, to now); an unknown entity is created.
        A later fact about the same single-valued attribute supersedes it."""
        return self._send(calls.remember(entity, fact, confidence, valid_from))

    def remember_batch(self, facts: Sequence[Dict[str, Any]]) -> RememberBatchResponse:
        """Up to 1,000 facts ({entity, fact, confidence?, valid_from?}) in one call; each result says stored or why not."""
        return self._send(calls.remember_batch(facts))

    def recall(
        self, query: str, entity: Optional[str] = None, limit: int = DEFAULT_RECALL_LIMIT,
        types: Optional[Sequence[MemoryType]] = None, *, explain: bool = False,
        as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
    ) -> RecallResponse:
        """The most relevant memories first, with contradictions among the returned facts."""
        return self._send(calls.recall(query, entity, limit, types, explain, as_of, include_superseded, since, until))

    def recall_grouped(
        self, query: str, limit: int = 50, order: GroupOrder = "chronological", max_groups: Optional[int] = None,
        *, entity: Optional[str] = None, explain: bool = False,
        as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
    ) -> RecallGroupedResponse:
        """Recall, grouped by the episode (session) each memory came from; ``entity`` keeps one
        entity's memories (an entity never stored for gives no groups)."""
        return self._send(calls.recall_grouped(query, limit, order, max_groups, explain, entity, as_of, include_superseded, since, until))

    def start_episode(self, participants: Sequence[str], started_at: Optional[str] = None) -> StartEpisodeResponse:
        return self._send(calls.start_episode(participants, started_at))

    def import_episode(
        self, participants: Sequence[str], messages: Sequence[Dict[str, Any]], started_at: Optional[str] = None, outcome: Optional[Outcome] = None,
    ) -> ImportEpisodeResponse:
        """A whole past conversation ([{role, content, occurred_at?}]) in one call, stored ended and extracted."""
        return self._send(calls.import_episode(participants, messages, started_at, outcome))

    def add_message(self, episode_id: str, role: str, content: str, occurred_at: Optional[str] = None) -> StatusResponse:
        return self._send(calls.add_message(episode_id, role, content, occurred_at))

    def end_episode(self, episode_id: str, outcome: Optional[Outcome] = None) -> EndEpisodeResponse:
        """Ends the episode and extracts memories from it (``memories_created``)."""
        return self._send(calls.end_episode(episode_id, outcome))

    def forget(self, entity: str, hard_delete: bool = False) -> ForgetResponse:
        """Deletes every memory of the entity after writing a recovery snapshot. The service does
        the same snapshot-backed delete whatever ``hard_delete`` says; it is sent for compatibility."""
        return self._send(calls.forget(entity, hard_delete))

    def inspect(self, entity: str, limit: Optional[int] = None, include_superseded: bool = False) -> InspectResponse:
        """The entity's most recent memories by type (limit defaults to 50 on the server); superseded facts only when asked."""
        return self._send(calls.inspect(entity, limit, include_superseded))

    def forget_memory(self, memory_id: str) -> ForgetResponse:
        """Retracts one memory after writing a recovery snapshot (restoring it brings the memory back);
        a fact it had superseded is current again."""
        return self._send(calls.forget_memory(memory_id))

    def memory_history(self, memory_id: str) -> MemoryHistoryResponse:
        """A memory with its supersession chain (oldest first) and its life events."""
        return self._send(calls.memory_history(memory_id))

    def stats(self) -> StatsResponse:
        return self._send(calls.stats())

    def consolidate(self) -> ConsolidateResponse:
        return self._send(calls.consolidate())

    def list_entities(self, q: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> ListEntitiesResponse:
        """A page of entities by name; ``q`` keeps those whose name contains it (any case)."""
        return self._send(calls.list_entities(q, limit, offset))

    def list_episodes(self, entity: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> ListEpisodesResponse:
        """A page of episodes, newest started first, with participants, outcome and times; ``entity`` keeps those it took part in."""
        return self._send(calls.list_episodes(entity, limit, offset))

    def list_namespaces(self, limit: Optional[int] = None, offset: Optional[int] = None) -> ListNamespacesResponse:
        """A page of the namespaces (creation order, up to 1,000) with their counts, and the total
        (operator keys only: a key bound to a namespace gets 403)."""
        return self._send(calls.list_namespaces(limit, offset))

    def list_snapshots(self) -> ListSnapshotsResponse:
        """Deletion snapshots beside the service's database, oldest first."""
        return self._send(calls.list_snapshots())

    def restore_snapshot(self, snapshot_id: str) -> RestoreResponse:
        """Puts a deleted entity's memories back; memories already present are skipped."""
        return self._send(calls.restore_snapshot(snapshot_id))

    def _send(self, call: Call) -> Any:
        settings = self._settings
        attempt = 0
        while True:
            answer = exchange(settings.origin, settings.encode(call), settings.timeout, call.target, settings.ssl_context)
            try:
                return settings.result(call, answer)
            except MemoryRuntimeError as error:
                delay = settings.retry_delay(call, error, attempt)
                if delay is None:
                    raise
            time.sleep(delay)
            attempt += 1

    def __repr__(self) -> str:
        return f"MemoryClient(base_url={self.base_url!r}, timeout={self.timeout!r})"

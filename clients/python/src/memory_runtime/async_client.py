"""AsyncMemoryClient: the same methods as MemoryClient, as coroutines.

Each call is one HTTP/1.1 exchange over an asyncio connection (_http.exchange_async), not the sync
client run in a thread: a thread per call in flight would cap concurrency at the executor's size
(a few threads on a small machine) and could not be stopped — a cancelled or timed-out await would
leave its thread blocked on the socket until the server answered. Here cancelling the task closes
the connection at once, and thousands of calls can wait together on one event loop. Requests,
answers, errors and retries are decided by the same code as the sync client (_protocol)."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, Dict, Optional, Sequence

from . import _calls as calls
from ._calls import Call
from ._http import exchange_async
from ._protocol import DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY, DEFAULT_RECALL_LIMIT, DEFAULT_TIMEOUT, Settings
from .errors import MemoryRuntimeError
from .types import (
    ConsolidateResponse, EndEpisodeResponse, Entity, EntityKind, ForgetResponse, GroupOrder, HealthResponse,
    InspectResponse, ListEntitiesResponse, ListEpisodesResponse, ListNamespacesResponse, ListSnapshotsResponse, MemoryType, Outcome, RecallGroupedResponse,
    RecallResponse, RestoreResponse, StartEpisodeResponse, StatsResponse, StatusResponse, StoredFact,
    ImportEpisodeResponse, MemoryHistoryResponse, RememberBatchResponse,
)


class AsyncMemoryClient:
    """An asyncio client of one memory service; arguments and behaviour as MemoryClient's."""

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
        """As MemoryClient.position."""
        return self._settings.position

    @position.setter
    def position(self, value: Optional[str]) -> None:
        self._settings.set_position(value)

    async def health(self) -> HealthResponse:
        return await self._send(calls.health())

    async def create_entity(self, name: str, kind: Optional[EntityKind] = None) -> Entity:
        return await self._send(calls.create_entity(name, kind))

    async def remember(self, entity: str, fact: str, confidence: Optional[float] = None, valid_from: Optional[str] = None) -> StoredFact:
        """Stores a semantic memory (confidence defaults to 0.8; valid_from, ISO 8601 with offset, to now); an unknown entity is created.
        A later fact about the same single-valued attribute supersedes it."""
        return await self._send(calls.remember(entity, fact, confidence, valid_from))

    async def remember_batch(self, facts: Sequence[Dict[str, Any]]) -> RememberBatchResponse:
        """Up to 1,000 facts ({entity, fact, confidence?, valid_from?}) in one call; each result says stored or why not."""
        return await self._send(calls.remember_batch(facts))

    async def recall(
        self, query: str, entity: Optional[str] = None, limit: int = DEFAULT_RECALL_LIMIT,
        types: Optional[Sequence[MemoryType]] = None, *, explain: bool = False,
        as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
    ) -> RecallResponse:
        return await self._send(calls.recall(query, entity, limit, types, explain, as_of, include_superseded, since, until))

    async def recall_grouped(
        self, query: str, limit: int = 50, order: GroupOrder = "chronological", max_groups: Optional[int] = None,
        *, entity: Optional[str] = None, explain: bool = False,
        as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
    ) -> RecallGroupedResponse:
        return await self._send(calls.recall_grouped(query, limit, order, max_groups, explain, entity, as_of, include_superseded, since, until))

    async def start_episode(self, participants: Sequence[str], started_at: Optional[str] = None) -> StartEpisodeResponse:
        return await self._send(calls.start_episode(participants, started_at))

    async def import_episode(
        self, participants: Sequence[str], messages: Sequence[Dict[str, Any]], started_at: Optional[str] = None, outcome: Optional[Outcome] = None,
    ) -> ImportEpisodeResponse:
        """A whole past conversation ([{role, content, occurred_at?}]) in one call, stored ended and extracted."""
        return await self._send(calls.import_episode(participants, messages, started_at, outcome))

    async def add_message(self, episode_id: str, role: str, content: str, occurred_at: Optional[str] = None) -> StatusResponse:
        return await self._send(calls.add_message(episode_id, role, content, occurred_at))

    async def end_episode(self, episode_id: str, outcome: Optional[Outcome] = None) -> EndEpisodeResponse:
        return await self._send(calls.end_episode(episode_id, outcome))

    async def forget(self, entity: str, hard_delete: bool = False) -> ForgetResponse:
        return await self._send(calls.forget(entity, hard_delete))

    async def inspect(self, entity: str, limit: Optional[int] = None, include_superseded: bool = False) -> InspectResponse:
        """The entity's most recent memories by type (limit defaults to 50 on the server); superseded facts only when asked."""
        return await self._send(calls.inspect(entity, limit, include_superseded))

    async def forget_memory(self, memory_id: str) -> ForgetResponse:
        """Retracts one memory after writing a recovery snapshot (see MemoryClient.forget_memory)."""
        return await self._send(calls.forget_memory(memory_id))

    async def memory_history(self, memory_id: str) -> MemoryHistoryResponse:
        """A memory with its supersession chain (oldest first) and its life events."""
        return await self._send(calls.memory_history(memory_id))

    async def stats(self) -> StatsResponse:
        return await self._send(calls.stats())

    async def consolidate(self) -> ConsolidateResponse:
        return await self._send(calls.consolidate())

    async def list_entities(self, q: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> ListEntitiesResponse:
        return await self._send(calls.list_entities(q, limit, offset))

    async def list_episodes(self, entity: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> ListEpisodesResponse:
        return await self._send(calls.list_episodes(entity, limit, offset))

    async def list_namespaces(self, limit: Optional[int] = None, offset: Optional[int] = None) -> ListNamespacesResponse:
        return await self._send(calls.list_namespaces(limit, offset))

    async def list_snapshots(self) -> ListSnapshotsResponse:
        return await self._send(calls.list_snapshots())

    async def restore_snapshot(self, snapshot_id: str) -> RestoreResponse:
        return await self._send(calls.restore_snapshot(snapshot_id))

    async def _send(self, call: Call) -> Any:
        settings = self._settings
        attempt = 0
        while True:
            answer = await exchange_async(settings.origin, settings.encode(call), settings.timeout, call.target, settings.ssl_context)
            try:
                return settings.result(call, answer)
            except MemoryRuntimeError as error:
                delay = settings.retry_delay(call, error, attempt)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
            attempt += 1

    def __repr__(self) -> str:
        return f"AsyncMemoryClient(base_url={self.base_url!r}, timeout={self.timeout!r})"

"""The JSON answers of the service, as the TypedDicts the methods return (plain dicts at run time).

They follow the server's schemas (src/shared/schemas.ts in the service's repository); the test
suite checks every answer of a real service against them (tests/shapes.py). Fields a server adds
later simply appear in the dict.
Python 3.9 has no ``NotRequired``: a dict with optional keys is a ``total=False`` subclass."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict

MemoryType = Literal["episodic", "semantic", "procedural"]
EntityKind = Literal["agent", "user", "team", "tool"]
Outcome = Literal["success", "failure", "partial"]
GroupOrder = Literal["chronological", "relevance"]
ExplainedSignal = Literal["lexical", "vector", "feedback", "adjacent", "session", "entity", "tie_break", "time"]


class HealthResponse(TypedDict):
    status: str
    version: str


class Entity(TypedDict):
    id: str
    name: str
    kind: EntityKind


class _StoredFactFields(TypedDict):
    id: str
    content: str
    memory_type: MemoryType
    confidence: float
    stability: float
    extraction_tier: int


class _TimeFields(TypedDict, total=False):
    #: Episodic: when it was said; semantic and procedural: when it became true (valid_from). ISO 8601.
    occurred_at: str
    #: Semantic: when a later fact superseded it, and that fact's id; None while current.
    valid_until: Optional[str]
    superseded_by: Optional[str]
    #: Episodic: the speaker role of the turn, and its episode.
    role: str
    episode_id: str


class StoredFact(_StoredFactFields, _TimeFields):
    """The answer of ``remember``."""


class SignalContribution(TypedDict):
    signal: ExplainedSignal
    rank: Optional[int]
    raw: Optional[float]
    weight: float
    contribution: float


class Explanation(TypedDict):
    """Present on a memory only when the call asked for ``explain=True``."""

    score: float
    signals: List[SignalContribution]


class _MemoryFields(TypedDict):
    id: str
    content: str
    memory_type: MemoryType
    confidence: float
    stability: float


class Memory(_MemoryFields, _TimeFields, total=False):
    #: Relevance: a number in recall answers, null in inspect answers.
    score: Optional[float]
    explanation: Explanation


class InspectedEpisodicMemory(Memory, total=False):
    #: The episode (session) this turn belongs to, and its 0-based place in it.
    episode_id: str
    seq: int


class InspectedFact(Memory):
    #: 1: the offline extraction rules, or a fact stored directly (remember); 2: the LLM extractor.
    extraction_tier: int


class _ContradictionFields(TypedDict):
    description: str


class Contradiction(_ContradictionFields, total=False):
    #: The ids of the two memories in conflict.
    memory_ids: List[str]


class RecallResponse(TypedDict):
    memories: List[Memory]
    contradictions: List[Contradiction]


class Group(TypedDict):
    session_id: Optional[str]
    session_time: str
    group_score: float
    memories: List[Memory]


class RecallGroupedResponse(TypedDict):
    groups: List[Group]


class StartEpisodeResponse(TypedDict):
    episode_id: str


class StatusResponse(TypedDict):
    status: Literal["ok"]


class EndEpisodeResponse(TypedDict):
    memories_created: int
    #: Which extractor produced the memories: 1 the offline rules (no LLM endpoint answered), 2 the LLM endpoint.
    extraction_tier: Literal[1, 2]


class ImportEpisodeResponse(TypedDict):
    episode_id: str
    memories_created: int
    extraction_tier: Literal[1, 2]


class BatchItemError(TypedDict):
    error: str
    code: str
    #: The field at fault, e.g. ``facts[3].valid_from``.
    field: str


class _BatchItemFields(TypedDict):
    index: int


class BatchItemResult(_BatchItemFields, total=False):
    #: The stored memory, or the error when the item was refused.
    memory: StoredFact
    error: BatchItemError


class RememberBatchResponse(TypedDict):
    results: List[BatchItemResult]
    stored: int
    failed: int


class DeletionSnapshot(TypedDict):
    snapshot_id: str
    format_version: int
    captured_at: str
    owner_only: bool
    memory_count: int
    episodic_count: int
    semantic_count: int


class _ForgetFields(TypedDict):
    forgotten_count: int


class ForgetResponse(_ForgetFields, total=False):
    #: Omitted when nothing was deleted.
    snapshot: DeletionSnapshot


class _InspectFields(TypedDict):
    entity: str
    episodic: List[InspectedEpisodicMemory]
    semantic: List[InspectedFact]
    procedural: List[InspectedFact]


class InspectResponse(_InspectFields, total=False):
    #: Pairs of the listed facts that conflict, as recall reports them.
    contradictions: List[Contradiction]


class StatsResponse(TypedDict):
    namespace: str
    entities: int
    episodic_memories: int
    semantic_memories: int
    procedural_memories: int


class ConsolidateResponse(TypedDict):
    promoted: int
    decayed: int
    archived: int


class EntitySummary(TypedDict):
    name: str
    kind: EntityKind
    created_at: str
    memory_count: int


class ListEntitiesResponse(TypedDict):
    entities: List[EntitySummary]
    total: int


class EpisodeSummary(TypedDict):
    episode_id: str
    participants: List[str]
    started_at: str
    ended_at: Optional[str]
    outcome: Optional[Outcome]
    message_count: int


class ListEpisodesResponse(TypedDict):
    episodes: List[EpisodeSummary]
    total: int


class SnapshotSummary(TypedDict):
    snapshot_id: str
    captured_at: Optional[str]
    namespace: Optional[str]
    entity: Optional[str]
    memory_count: int
    counts: Dict[str, int]
    vectors: int
    #: Why the file cannot be restored (damaged), else None.
    problem: Optional[str]


class ListNamespacesResponse(TypedDict):
    namespaces: List[StatsResponse]
    total: int


class ListSnapshotsResponse(TypedDict):
    snapshots: List[SnapshotSummary]


class RestoreResponse(TypedDict):
    snapshot_id: str
    namespace: str
    entity: str
    restored_count: int
    already_present_count: int


MemoryEvent = Literal["stored", "reinforced", "promoted_from", "decayed", "archived", "superseded", "restored"]


class _HistoryEventFields(TypedDict):
    event: MemoryEvent
    at: Optional[str]


class HistoryEvent(_HistoryEventFields, total=False):
    #: promoted_from: the episodic memory; superseded: the fact that replaced it.
    memory_id: str
    #: reinforced: how many recalls returned it (``at``: the last).
    count: int


class MemoryHistoryResponse(TypedDict):
    memory: Memory
    #: The values of the same attribute over time, oldest first, itself included.
    chain: List[Memory]
    events: List[HistoryEvent]

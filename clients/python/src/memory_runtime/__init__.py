"""Python client for the memory runtime's REST API: ``MemoryClient`` (blocking) and
``AsyncMemoryClient`` (asyncio), standard library only. See clients/python/README.md."""

from ._protocol import DEFAULT_BASE_URL, DEFAULT_RECALL_LIMIT, DEFAULT_TIMEOUT, __version__
from .async_client import AsyncMemoryClient
from .client import MemoryClient
from .errors import MemoryConnectionError, MemoryRuntimeError, MemoryTimeoutError
from .types import (
    ConsolidateResponse, Contradiction, DeletionSnapshot, EndEpisodeResponse, Entity, EntityKind, EntitySummary,
    Explanation, ForgetResponse, Group, GroupOrder, HealthResponse, InspectedEpisodicMemory, InspectedFact, InspectResponse,
    ListEntitiesResponse, ListNamespacesResponse, ListSnapshotsResponse, Memory, MemoryType, Outcome, RecallGroupedResponse, RecallResponse,
    RestoreResponse, SignalContribution, SnapshotSummary, StartEpisodeResponse, StatsResponse, StatusResponse,
    StoredFact, ImportEpisodeResponse, RememberBatchResponse, BatchItemResult, BatchItemError,
    MemoryHistoryResponse, HistoryEvent, EpisodeSummary, ListEpisodesResponse,
)

__all__ = [
    "AsyncMemoryClient", "MemoryClient", "MemoryConnectionError", "MemoryRuntimeError", "MemoryTimeoutError",
    "DEFAULT_BASE_URL", "DEFAULT_RECALL_LIMIT", "DEFAULT_TIMEOUT", "__version__",
    "ConsolidateResponse", "Contradiction", "DeletionSnapshot", "EndEpisodeResponse", "Entity", "EntityKind",
    "EntitySummary", "Explanation", "ForgetResponse", "Group", "GroupOrder", "HealthResponse",
    "InspectedEpisodicMemory", "InspectedFact", "InspectResponse", "ListEntitiesResponse", "ListNamespacesResponse", "ListSnapshotsResponse", "Memory",
    "MemoryType", "Outcome", "RecallGroupedResponse", "RecallResponse", "RestoreResponse", "SignalContribution",
    "SnapshotSummary", "StartEpisodeResponse", "StatsResponse", "StatusResponse", "StoredFact",
    "ImportEpisodeResponse", "RememberBatchResponse", "BatchItemResult", "BatchItemError",
    "MemoryHistoryResponse", "HistoryEvent", "EpisodeSummary", "ListEpisodesResponse",
]

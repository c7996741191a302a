"""What each method sends: the route of every operation and how a method's arguments become its
request (path, query string, JSON body). Shared by MemoryClient and AsyncMemoryClient, whose
methods are one line each over these, so the two cannot send different things."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence
from urllib.parse import quote


@dataclass(frozen=True)
class Route:
    method: str
    #: ``{name}`` segments are filled with a percent-encoded argument.
    path: str
    #: The route takes a Memory-Position (recall): the furthest one this client saw is sent.
    takes_position: bool = False
    #: Sending it twice does what sending it once does (a read, a create-or-get, a delete, a
    #: restore that skips what is present): it may be sent again after any 503 (_protocol.py).
    #: GET and DELETE are so by their method.
    idempotent: bool = False

    @property
    def repeatable(self) -> bool:
        return self.idempotent or self.method in ("GET", "DELETE")


#: Each operation's route, as the service declares it (src/shared/operations/ in its repository;
#: tests/test_coverage.py holds this table against the served OpenAPI document, both ways).
ROUTES: Dict[str, Route] = {
    "health": Route("GET", "/v1/health"),
    "stats": Route("GET", "/v1/stats"),
    "create_entity": Route("POST", "/v1/entities", idempotent=True),
    "list_entities": Route("GET", "/v1/entities"),
    "list_episodes": Route("GET", "/v1/episodes"),
    "forget": Route("DELETE", "/v1/entities/{entity_name}"),
    "inspect": Route("POST", "/v1/inspect", idempotent=True),
    "remember": Route("POST", "/v1/remember"),
    "remember_batch": Route("POST", "/v1/remember/batch"),
    "memory_history": Route("GET", "/v1/memories/{memory_id}/history"),
    "forget_memory": Route("DELETE", "/v1/memories/{memory_id}"),
    "recall": Route("POST", "/v1/recall", takes_position=True, idempotent=True),
    "recall_grouped": Route("POST", "/v1/recall_grouped", takes_position=True, idempotent=True),
    "consolidate": Route("POST", "/v1/consolidate"),
    "start_episode": Route("POST", "/v1/episodes/start"),
    "import_episode": Route("POST", "/v1/episodes/import"),
    "add_message": Route("POST", "/v1/episodes/{id}/message"),
    "end_episode": Route("POST", "/v1/episodes/{id}/end"),
    "list_snapshots": Route("GET", "/v1/snapshots"),
    "list_namespaces": Route("GET", "/v1/namespaces"),
    "restore_snapshot": Route("POST", "/v1/snapshots/{snapshot_id}/restore", idempotent=True),
}


def path_segment(value: str) -> str:
    """A value as exactly one path segment. ``quote`` leaves "." alone, and a server or proxy
    treats "." and ".." as dot segments (``/v1/entities/..`` is ``/v1/``), so those two are
    spelled ``%2E``/``%2E%2E``, which the service decodes back."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string path value, got {type(value).__name__}")
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")


@dataclass(frozen=True)
class Call:
    operation: str
    #: Path and query string, percent-encoded.
    target: str
    #: The JSON body; None when the route takes none.
    body: Optional[Dict[str, Any]]
    takes_position: bool


def _query_value(value: Any) -> str:
    # JSON spellings (true/false), as the server's query parser reads them.
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def make_call(
    operation: str,
    path_params: Optional[Dict[str, str]] = None,
    body: Optional[Dict[str, Any]] = None,
    query: Optional[Dict[str, Any]] = None,
) -> Call:
    route = ROUTES[operation]
    target = route.path.format(**{name: path_segment(value) for name, value in (path_params or {}).items()})
    fields = [(key, value) for key, value in (query or {}).items() if value is not None]
    if fields:
        target += "?" + "&".join(f"{quote(key, safe='')}={quote(_query_value(value), safe='')}" for key, value in fields)
    return Call(operation, target, body, route.takes_position)


def without_none(**fields: Any) -> Dict[str, Any]:
    """The body with the fields left out that the caller did not give (the server's defaults apply)."""
    return {key: value for key, value in fields.items() if value is not None}


# ------------------------------------------------------------------ the calls, method by method


def health() -> Call:
    return make_call("health")


def stats() -> Call:
    return make_call("stats")


def create_entity(name: str, kind: Optional[str]) -> Call:
    return make_call("create_entity", body=without_none(name=name, kind=kind))


def remember(entity: str, fact: str, confidence: Optional[float], valid_from: Optional[str] = None) -> Call:
    return make_call("remember", body=without_none(entity=entity, fact=fact, confidence=confidence, valid_from=valid_from))


def memory_history(memory_id: str) -> Call:
    return make_call("memory_history", {"memory_id": memory_id})


def forget_memory(memory_id: str) -> Call:
    return make_call("forget_memory", {"memory_id": memory_id})


def remember_batch(facts: Sequence[Dict[str, Any]]) -> Call:
    return make_call("remember_batch", body={"facts": [dict(fact) for fact in facts]})


def _time_fields(body: Dict[str, Any], as_of: Optional[str], include_superseded: bool, since: Optional[str], until: Optional[str]) -> None:
    """Recall's time filters, sent only when given (the server's defaults: valid now, any time)."""
    body.update(without_none(as_of=as_of, since=since, until=until))
    if include_superseded:
        body["include_superseded"] = True


def recall(
    query: str, entity: Optional[str], limit: int, types: Optional[Sequence[str]], explain: bool,
    as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
) -> Call:
    body: Dict[str, Any] = {"query": query, "entity": entity, "limit": limit, "types": _list_or_none("types", types)}
    if explain:
        body["explain"] = True
    _time_fields(body, as_of, include_superseded, since, until)
    return make_call("recall", body=body)


def recall_grouped(
    query: str, limit: int, order: str, max_groups: Optional[int], explain: bool, entity: Optional[str] = None,
    as_of: Optional[str] = None, include_superseded: bool = False, since: Optional[str] = None, until: Optional[str] = None,
) -> Call:
    body: Dict[str, Any] = {"query": query, "limit": limit, "order": order, "max_groups": max_groups}
    if entity is not None:
        body["entity"] = entity
    if explain:
        body["explain"] = True
    _time_fields(body, as_of, include_superseded, since, until)
    return make_call("recall_grouped", body=body)


def start_episode(participants: Sequence[str], started_at: Optional[str] = None) -> Call:
    return make_call("start_episode", body=without_none(participants=_list_or_none("participants", participants), started_at=started_at))


def import_episode(participants: Sequence[str], messages: Sequence[Dict[str, Any]], started_at: Optional[str], outcome: Optional[str]) -> Call:
    return make_call("import_episode", body=without_none(
        participants=_list_or_none("participants", participants), messages=[dict(m) for m in messages],
        started_at=started_at, outcome=outcome,
    ))


def add_message(episode_id: str, role: str, content: str, occurred_at: Optional[str] = None) -> Call:
    return make_call("add_message", {"id": episode_id}, body=without_none(role=role, content=content, occurred_at=occurred_at))


def end_episode(episode_id: str, outcome: Optional[str]) -> Call:
    return make_call("end_episode", {"id": episode_id}, body=without_none(outcome=outcome))


def forget(entity: str, hard_delete: bool) -> Call:
    return make_call("forget", {"entity_name": entity}, query={"hard_delete": bool(hard_delete)})


def inspect(entity: str, limit: Optional[int], include_superseded: bool = False) -> Call:
    body = without_none(entity=entity, limit=limit)
    if include_superseded:
        body["include_superseded"] = True
    return make_call("inspect", body=body)


def consolidate() -> Call:
    return make_call("consolidate")


def list_entities(q: Optional[str], limit: Optional[int], offset: Optional[int]) -> Call:
    return make_call("list_entities", query={"q": q, "limit": limit, "offset": offset})


def list_episodes(entity: Optional[str], limit: Optional[int], offset: Optional[int]) -> Call:
    return make_call("list_episodes", query={"entity": entity, "limit": limit, "offset": offset})


def list_snapshots() -> Call:
    return make_call("list_snapshots")


def list_namespaces(limit: Optional[int], offset: Optional[int]) -> Call:
    return make_call("list_namespaces", query={"limit": limit, "offset": offset})


def restore_snapshot(snapshot_id: str) -> Call:
    return make_call("restore_snapshot", {"snapshot_id": snapshot_id})


def _list_or_none(field: str, values: Optional[Sequence[str]]) -> Optional[list]:
    # A str is a sequence too: start_episode("alice") would send ["a", "l", "i", "c", "e"].
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{field}: expected a list of strings, got a single {type(values).__name__}")
    return None if values is None else list(values)

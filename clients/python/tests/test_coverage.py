"""The client against the service's own description of itself (GET /v1/openapi.json, generated from
the operation declarations): every route it serves has a method here (or is listed below with the
reason it has none), every method's route is served, each body field and query parameter the
service takes (but the deprecated ones it accepts from other clients and ignores) is a parameter of
the method, the defaults agree, and each TypedDict names the same
fields as the schema of the answer. A route or field added to the service fails this test until
the client follows."""

from __future__ import annotations

import inspect
import json
import typing
import unittest
import urllib.request
from typing import Any, Dict, List, Set, Tuple

from memory_runtime import AsyncMemoryClient, MemoryClient
from memory_runtime._calls import ROUTES

from .support import OPEN_URL, needs_service

#: Served routes the client has no method for, and why.
NOT_CLIENT_METHODS = {
    ("GET", "/metrics"): "Prometheus text for scrapers, not for agents",
    ("GET", "/v1/openapi.json"): "this document",
    ("POST", "/v1/episodes/message"): "compatibility form of add_message (episode id in the body)",
    ("POST", "/v1/episodes/end"): "compatibility form of end_episode (episode id in the body)",
}

#: Path parameter → the method parameter that fills it.
PATH_PARAMETERS = {"entity_name": "entity", "id": "episode_id", "snapshot_id": "snapshot_id"}


def _unwrap(hint: Any) -> Any:
    """Optional[X] → X; List[X] stays."""
    if typing.get_origin(hint) is typing.Union:
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return options[0] if len(options) == 1 else hint
    return hint


@needs_service
class AgainstTheServedDocument(unittest.TestCase):
    document: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        with urllib.request.urlopen(f"{OPEN_URL}/v1/openapi.json", timeout=30) as answer:
            cls.document = json.load(answer)

    def resolve(self, schema: Dict[str, Any]) -> Dict[str, Any]:
        while "$ref" in schema:
            schema = self.document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def resolve_parameter(self, parameter: Dict[str, Any]) -> Dict[str, Any]:
        if "$ref" in parameter:
            return self.document["components"]["parameters"][parameter["$ref"].rsplit("/", 1)[1]]
        return parameter

    def served(self) -> Dict[Tuple[str, str], Dict[str, Any]]:
        return {(method.upper(), path): operation
                for path, methods in self.document["paths"].items() for method, operation in methods.items()}

    def test_every_served_route_has_a_method_and_every_method_is_served(self) -> None:
        served = set(self.served())
        ours = {(route.method, route.path) for route in ROUTES.values()}
        self.assertEqual(sorted(served - ours - set(NOT_CLIENT_METHODS)), [], "served routes without a client method")
        self.assertEqual(sorted(ours - served), [], "client routes the service does not serve")
        self.assertEqual(sorted(set(NOT_CLIENT_METHODS) - served), [], "stale entries in NOT_CLIENT_METHODS")
        public = sorted(n for n, v in vars(MemoryClient).items() if callable(v) and not n.startswith("_"))
        self.assertEqual(public, sorted(ROUTES))
        for name in ROUTES:
            self.assertTrue(hasattr(AsyncMemoryClient, name), name)

    def test_each_field_and_parameter_the_service_takes_is_a_method_parameter_with_its_default(self) -> None:
        served = self.served()
        for name, route in ROUTES.items():
            operation = served[(route.method, route.path)]
            params = inspect.signature(getattr(MemoryClient, name)).parameters
            taken: Dict[str, Any] = {}
            for reference in operation.get("parameters", []):
                parameter = self.resolve_parameter(reference)
                if parameter["in"] == "header" and parameter["name"] == "Memory-Namespace":
                    # Every route takes it: the client's `namespace` option sends it on every call.
                    self.assertIn("namespace", inspect.signature(MemoryClient.__init__).parameters)
                    continue
                if parameter["in"] == "header":
                    # Memory-Position, the one per-route header: the client sends its position.
                    self.assertEqual(parameter["name"], "Memory-Position", name)
                    self.assertTrue(route.takes_position, f"{name}: the route takes a position the client never sends")
                    continue
                field = PATH_PARAMETERS.get(parameter["name"], parameter["name"]) if parameter["in"] == "path" else parameter["name"]
                taken[field] = parameter.get("schema", {})
            body = operation.get("requestBody")
            if body:
                # Deprecated fields are accepted from other clients and ignored: no method sends them.
                fields = self.resolve(body["content"]["application/json"]["schema"]).get("properties", {})
                taken.update({field: schema for field, schema in fields.items() if not schema.get("deprecated")})
            self.assertEqual(sorted(set(taken) - set(params)), [], f"{name}: fields the service takes that the method lacks")
            takes_header = any(self.resolve_parameter(p)["in"] == "header" and self.resolve_parameter(p)["name"] == "Memory-Position"
                               for p in operation.get("parameters", []))
            self.assertEqual(route.takes_position, takes_header, f"{name}: Memory-Position")
            for field, schema in taken.items():
                default = params[field].default
                if "default" not in schema or default is inspect.Parameter.empty or default is None:
                    continue  # required, left to the server, or without a default (forget's ignored flag)
                self.assertEqual(default, schema["default"], f"{name}({field}=...): the service's default is {schema['default']!r}")

    def test_each_typed_answer_names_the_fields_of_the_served_schema(self) -> None:
        served = self.served()
        for name, route in ROUTES.items():
            operation = served[(route.method, route.path)]
            success = next(answer for status, answer in operation["responses"].items() if status.startswith("2"))
            schema = success["content"]["application/json"]["schema"]
            returned = typing.get_type_hints(getattr(MemoryClient, name))["return"]
            self.assertEqual(self.differences(schema, returned, name), [], name)

    def differences(self, schema: Dict[str, Any], hint: Any, where: str) -> List[str]:
        schema = self.resolve(schema)
        hint = _unwrap(hint)
        if "anyOf" in schema:
            options = [self.resolve(s) for s in schema["anyOf"] if self.resolve(s).get("type") != "null"]
            return self.differences(options[0], hint, where) if len(options) == 1 else []
        if schema.get("type") == "array" and typing.get_origin(hint) in (list, List):
            return self.differences(schema["items"], typing.get_args(hint)[0], f"{where}[]")
        if schema.get("type") == "object" and "properties" in schema and hasattr(hint, "__required_keys__"):
            properties = schema["properties"]
            keys: Set[str] = set(hint.__required_keys__) | set(hint.__optional_keys__)
            found = [f"{where}: schema field {k!r} missing from {hint.__name__}" for k in sorted(set(properties) - keys)]
            found += [f"{where}: {hint.__name__}.{k} is not in the schema" for k in sorted(keys - set(properties))]
            required = set(schema.get("required", []))
            found += [f"{where}: {hint.__name__}.{k} should be {'required' if k in required else 'optional'}"
                      for k in sorted(keys & set(properties)) if (k in required) != (k in hint.__required_keys__)]
            hints = typing.get_type_hints(hint)
            for key in sorted(keys & set(properties)):
                found += self.differences(properties[key], hints[key], f"{where}.{key}")
            return found
        return []


if __name__ == "__main__":
    unittest.main()

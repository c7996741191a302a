"""Checks a decoded answer against the TypedDict the method is typed to return, recursively: every
required key present, no value of the wrong type. So the types in memory_runtime/types.py are
held to what a real service answers, not just written down."""

from __future__ import annotations

import typing
from typing import Any, List


def problems(value: Any, expected: Any, where: str = "answer") -> List[str]:
    origin = typing.get_origin(expected)
    args = typing.get_args(expected)
    if expected is Any:
        return []
    if origin is typing.Union:
        found = [problems(value, option, where) for option in args]
        return [] if any(not p for p in found) else [f"{where}: {value!r} matches none of {expected}"]
    if origin is typing.Literal:
        return [] if value in args else [f"{where}: {value!r} not one of {args}"]
    if origin in (list, List):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in problems(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        return [p for key, item in value.items() for p in problems(item, args[1], f"{where}.{key}")]
    if isinstance(expected, type) and issubclass(expected, dict) and hasattr(expected, "__required_keys__"):
        if not isinstance(value, dict):
            return [f"{where}: expected an object ({expected.__name__}), got {type(value).__name__}"]
        hints = typing.get_type_hints(expected)
        found = [f"{where}: missing {key!r} ({expected.__name__})" for key in expected.__required_keys__ if key not in value]
        for key, hint in hints.items():
            if key in value:
                found += problems(value[key], hint, f"{where}.{key}")
        return found
    if expected is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif expected is type(None):
        ok = value is None
    else:
        ok = isinstance(value, expected)
    return [] if ok else [f"{where}: expected {getattr(expected, '__name__', expected)}, got {value!r}"]


def assert_shape(case: Any, value: Any, expected: Any) -> None:
    found = problems(value, expected)
    case.assertEqual(found, [], f"answer does not match {getattr(expected, '__name__', expected)}: {value!r}")

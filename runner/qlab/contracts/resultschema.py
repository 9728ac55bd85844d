"""``schemas/result.schema.json`` and its compiled check: the in-run ``output_schema`` guard checks every stage
object of every case at every stage boundary, and every reader of a result checks the whole artifact.

The result schema uses a small draft-07 subset, compiled once into closures that name the first problem with its
JSON path: ``type``, ``enum``, ``const``, ``minimum``, ``required``, ``properties``, ``additionalProperties``,
``items``, ``anyOf``, ``allOf`` and local ``$ref``; any other keyword is refused at compile time. jsonschema is the
reference (``tests/contracts/test_resultschema.py`` checks the verdicts against its own on generated documents); it is
not the checker because a run checks each of its cases' objects, which its validator does too slowly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

# value -> None when it fits, else (the JSON path below the value, the problem): a path is only made for a problem
Found = tuple[str, str]
Check = Callable[[Any], "Found | None"]
IGNORED = frozenset({"description", "title", "$schema", "$id", "definitions", "default", "examples"})
KEYWORDS = frozenset({"type", "enum", "const", "minimum", "required", "properties", "additionalProperties", "items",
                      "anyOf", "allOf", "$ref"})  # fmt: skip
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


@cache
def load() -> dict[str, Any]:
    from qlab.contracts.resources import load_schema  # finds schemas/ in a wheel and in a checkout

    return load_schema("result")


def _compile(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    unknown = set(node) - IGNORED - KEYWORDS
    if unknown:
        raise ValueError(f"result schema uses unsupported keyword(s): {sorted(unknown)}")
    checks: list[Check] = []
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in memo:
            memo[name] = lambda v: None  # placeholder while compiling (recursive refs)
            memo[name] = _compile(defs[name], defs, memo)
        checks.append(lambda v: memo[name](v))
    if "type" in node:
        checks.append(_type_check(node["type"] if isinstance(node["type"], list) else [node["type"]]))
    if "enum" in node:
        allowed = list(node["enum"])
        checks.append(lambda v: None if v in allowed else ("", f"{v!r} is not one of {allowed}"))
    if "const" in node:
        const = node["const"]
        checks.append(lambda v: None if v == const else ("", f"expected {const!r}"))
    if "minimum" in node:
        low, number = node["minimum"], _TYPES["number"]
        checks.append(lambda v: ("", f"{v} is below {low}") if number(v) and v < low else None)
    if "required" in node:
        keys = list(node["required"])
        checks.append(lambda v: _missing(v, keys))
    if "properties" in node or "additionalProperties" in node:
        checks.append(_object_check(node, defs, memo))
    if "items" in node:
        checks.append(_items_check(_compile(node["items"], defs, memo)))
    for key, want_all in (("allOf", True), ("anyOf", False)):
        if key in node:
            subs = [_compile(s, defs, memo) for s in node[key]]
            checks.append(_all(subs) if want_all else _any(subs))
    return _all(checks)


def _type_check(names: list[str]) -> Check:
    tests, label = [_TYPES[n] for n in names], " or ".join(names)

    def check(value: Any) -> Found | None:
        for test in tests:
            if test(value):
                return None
        return "", f"expected {label}, got {_kind(value)}"

    return check


def _object_check(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    props = {k: _compile(s, defs, memo) for k, s in node.get("properties", {}).items()}
    extra = node.get("additionalProperties", True)
    other: Check | None = (
        None
        if extra is True
        else (lambda v: ("", "unexpected property"))
        if extra is False
        else _compile(extra, defs, memo)
    )

    def check(value: Any) -> Found | None:
        if not isinstance(value, dict):
            return None
        for key, item in value.items():
            sub = props.get(key, other)
            found = sub(item) if sub is not None else None
            if found:
                return f".{key}{found[0]}", found[1]
        return None

    return check


def _items_check(item: Check) -> Check:
    def check(value: Any) -> Found | None:
        if not isinstance(value, list):
            return None
        for index, element in enumerate(value):
            found = item(element)
            if found:
                return f"[{index}]{found[0]}", found[1]
        return None

    return check


def _all(checks: list[Check]) -> Check:
    """The first problem any of ``checks`` finds."""
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> Found | None:
        for each in checks:
            found = each(value)
            if found:
                return found
        return None

    return check


def _any(checks: list[Check]) -> Check:
    """None when one of ``checks`` finds no problem, else the first one's problem."""

    def check(value: Any) -> Found | None:
        problems = [each(value) for each in checks]
        return None if any(found is None for found in problems) else next(p for p in problems if p)

    return check


def _missing(value: Any, keys: list[str]) -> Found | None:
    if not isinstance(value, dict):
        return None
    for key in keys:
        if key not in value:
            return "", f"{key!r} is required"
    return None


def _kind(value: Any) -> str:
    return (
        "null"
        if value is None
        else {bool: "boolean", dict: "object", list: "array", str: "string"}.get(
            type(value),
            "integer"
            if isinstance(value, int)
            else "number"
            if isinstance(value, float)
            else type(value).__name__,
        )
    )


@cache
def checker(definition: str) -> Check:
    """The compiled check of ``definitions/<definition>`` of the result schema (e.g. ``search``, ``case``)."""
    defs = load()["definitions"]
    return _compile(defs[definition], defs, {})


@cache
def _artifact_checker(partial: bool) -> Check:
    schema = load()
    skip = {"definitions", "required"} if partial else {"definitions"}
    defs, root = schema["definitions"], {k: v for k, v in schema.items() if k not in skip}
    return _compile(root, defs, {})


def _said(found: Found | None, path: str) -> str | None:
    return None if found is None else f"{path}{found[0]}: {found[1]}"


def artifact_problem(value: Any, *, partial: bool = False) -> str | None:
    """The first problem of a whole result artifact against the result schema, as ``$.json.path: message``:
    readers (report, merge, promote, release) check it before they trust any field. ``partial`` lets top-level
    sections be absent (governance reads hand-trimmed artifacts); what is there must still fit."""
    return _said(_artifact_checker(partial)(value), "$")


def problem(definition: str, value: Any, path: str = "$") -> str | None:
    """The first problem of ``value`` against ``definitions/<definition>``, as ``$.json.path: message``."""
    return _said(checker(definition)(value), path)

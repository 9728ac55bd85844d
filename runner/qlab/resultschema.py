"""``schemas/result.schema.json`` and a fast checker for its per-case sub-schemas (the in-run ``output_schema``
guard validates every stage object of every case at every stage boundary).

Why not jsonschema here: measured on a search object with 8 Top-K rows, ``Draft7Validator.is_valid`` takes
1.2 ms, so 100,000 cases would spend 120 s in validation alone (fastjsonschema: 59 µs). The result schema uses
a small draft-07 subset, so it is compiled into closures once: ``type``, ``enum``, ``const``, ``minimum``,
``required``, ``properties``, ``additionalProperties``, ``items``, ``anyOf``, ``allOf`` and local ``$ref``.
Any other keyword is refused at compile time, and ``tests/test_resultschema.py`` checks the verdicts against
jsonschema's on generated documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

Check = Callable[[Any, str], "str | None"]  # (value, json path) -> first problem, or None
IGNORED = frozenset({"description", "title", "$schema", "$id", "definitions", "default", "examples"})
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
    from qlab.resources import load_schema  # finds schemas/ in a wheel and in a checkout

    return load_schema("result")


def _compile(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    unknown = set(node) - IGNORED - {
        "type", "enum", "const", "minimum", "required", "properties", "additionalProperties", "items", "anyOf",
        "allOf", "$ref",
    }  # fmt: skip
    if unknown:
        raise ValueError(f"result schema uses unsupported keyword(s): {sorted(unknown)}")
    checks: list[Check] = []
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in memo:
            memo[name] = lambda v, p: None  # placeholder while compiling (recursive refs)
            memo[name] = _compile(defs[name], defs, memo)
        checks.append(lambda v, p: memo[name](v, p))
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        tests = [_TYPES[n] for n in names]
        label = " or ".join(names)
        checks.append(
            lambda v, p: None if any(t(v) for t in tests) else f"{p}: expected {label}, got {_kind(v)}"
        )
    if "enum" in node:
        allowed = list(node["enum"])
        checks.append(lambda v, p: None if v in allowed else f"{p}: {v!r} is not one of {allowed}")
    if "const" in node:
        const = node["const"]
        checks.append(lambda v, p: None if v == const else f"{p}: expected {const!r}")
    if "minimum" in node:
        low = node["minimum"]
        checks.append(lambda v, p: f"{p}: {v} is below {low}" if _TYPES["number"](v) and v < low else None)
    if "required" in node:
        keys = list(node["required"])
        checks.append(lambda v, p: _missing(v, p, keys))
    if "properties" in node or "additionalProperties" in node:
        checks.append(_object_check(node, defs, memo))
    if "items" in node:
        item = _compile(node["items"], defs, memo)
        checks.append(
            lambda v, p: (
                _first(item(x, f"{p}[{i}]") for i, x in enumerate(v)) if isinstance(v, list) else None
            )
        )
    for key, want_all in (("allOf", True), ("anyOf", False)):
        if key in node:
            subs = [_compile(s, defs, memo) for s in node[key]]
            checks.append(_combine(subs, want_all=want_all))
    return lambda v, p: _first(c(v, p) for c in checks)


Ok = Callable[[Any], bool]


def _fast(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Ok | None]) -> Ok | None:
    """The same schema compiled to a plain yes/no check, or None when anything goes: no paths, no messages
    (the hot path). Loops instead of generators: this runs for every object of every case."""
    tests: list[Ok] = []
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in memo:
            memo[name] = lambda v: True  # placeholder while compiling (recursive refs)
            memo[name] = _fast(defs[name], defs, memo)
        target = memo[name]
        if target is not None:
            tests.append(lambda v: memo[name](v))  # type: ignore[misc]
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        kinds = [_TYPES[n] for n in names]
        tests.append(kinds[0] if len(kinds) == 1 else (lambda v: any(k(v) for k in kinds)))
    if "enum" in node:
        allowed = list(node["enum"])
        tests.append(lambda v: v in allowed)
    if "const" in node:
        const = node["const"]
        tests.append(lambda v: v == const)
    if "minimum" in node:
        low = node["minimum"]
        tests.append(lambda v: not (_TYPES["number"](v) and v < low))
    if "required" in node:
        keys = tuple(node["required"])

        def required(v: Any) -> bool:
            if isinstance(v, dict):
                for k in keys:
                    if k not in v:
                        return False
            return True

        tests.append(required)
    if "properties" in node or "additionalProperties" in node:
        props = {k: _fast(s, defs, memo) for k, s in node.get("properties", {}).items()}
        extra = node.get("additionalProperties", True)
        other: Ok | None = (
            None if extra is True else (lambda v: False) if extra is False else _fast(extra, defs, memo)
        )

        def obj(v: Any) -> bool:
            if isinstance(v, dict):
                for key, item in v.items():
                    sub = props.get(key, other)
                    if sub is not None and not sub(item):
                        return False
            return True

        tests.append(obj)
    if "items" in node:
        item = _fast(node["items"], defs, memo)
        if item is not None:
            each: Ok = item

            def items(v: Any) -> bool:
                if isinstance(v, list):
                    for x in v:
                        if not each(x):
                            return False
                return True

            tests.append(items)
    if "allOf" in node:
        subs = [f for f in (_fast(s, defs, memo) for s in node["allOf"]) if f is not None]
        tests.extend(subs)
    if "anyOf" in node:
        alts = [_fast(s, defs, memo) for s in node["anyOf"]]
        if all(a is not None for a in alts):
            tests.append(lambda v: any(a(v) for a in alts))  # type: ignore[misc]
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda v: first(v) and second(v)

    def every(v: Any) -> bool:
        for t in tests:  # noqa: SIM110 - a plain loop: all(<generator>) costs a frame per object on the hot path
            if not t(v):
                return False
        return True

    return every


def _object_check(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    props = {k: _compile(s, defs, memo) for k, s in node.get("properties", {}).items()}
    extra = node.get("additionalProperties", True)
    other: Check | None = (
        None
        if extra is True
        else (lambda v, p: f"{p}: unexpected property")
        if extra is False
        else _compile(extra, defs, memo)
    )

    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, dict):
            return None
        for key, item in value.items():
            sub = props.get(key, other)
            if sub is not None:
                problem = sub(item, f"{path}.{key}")
                if problem:
                    return problem
        return None

    return check


def _combine(subs: list[Check], *, want_all: bool) -> Check:
    def check(value: Any, path: str) -> str | None:
        problems = [s(value, path) for s in subs]
        if want_all:
            return _first(problems)
        return None if any(p is None for p in problems) else _first(problems)

    return check


def _missing(value: Any, path: str, keys: list[str]) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in keys:
        if key not in value:
            return f"{path}: {key!r} is required"
    return None


def _first(problems: Any) -> str | None:
    for problem in problems:
        if problem:
            return str(problem)
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
def checker(definition: str) -> tuple[Ok, Check]:
    """The compiled checks for ``definitions/<definition>`` of the result schema (e.g. ``search``, ``case``):
    a fast yes/no one, and one that explains the first problem with its JSON path."""
    defs = load()["definitions"]
    fast = _fast(defs[definition], defs, {})
    return (fast if fast is not None else lambda v: True), _compile(defs[definition], defs, {})


@cache
def _artifact_checker(partial: bool) -> tuple[Ok, Check]:
    schema = load()
    skip = {"definitions", "required"} if partial else {"definitions"}
    defs, root = schema["definitions"], {k: v for k, v in schema.items() if k not in skip}
    fast = _fast(root, defs, {})
    return (fast if fast is not None else lambda v: True), _compile(root, defs, {})


def artifact_problem(value: Any, *, partial: bool = False) -> str | None:
    """The first problem of a whole result artifact against the result schema, as ``$.json.path: message``:
    readers (report, merge, promote, release) check it before they trust any field. ``partial`` lets top-level
    sections be absent (governance reads hand-trimmed artifacts); what is there must still fit."""
    ok, explain = _artifact_checker(partial)
    return None if ok(value) else explain(value, "$") or "$: invalid"


def problem(definition: str, value: Any, path: str = "$") -> str | None:
    """The first problem of ``value`` against ``definitions/<definition>``, as ``$.json.path: message``."""
    ok, explain = checker(definition)
    return None if ok(value) else explain(value, path) or f"{path}: invalid"

"""quickcheck: a True verdict is one jsonschema agrees with (on generated cases and on every real case file), a
False one too; what it does not decide is None; and plainly valid cases do take the fast path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qlab.contracts.resources import load_schema
from qlab.project import schemas
from qlab.project.files import read_document
from qlab.project.quickcheck import compile_schema

ROOT = Path(__file__).resolve().parents[2]
CASE_SCHEMA = load_schema("case")
DEFINITIONS = CASE_SCHEMA["definitions"]


PLAUSIBLE = ["c-1", "$.data[0].id", "data", "/items/1", "GET", "2xx", "orderId", "x"]
STRINGS = [*PLAUSIBLE, "", "-bad", "a b", "x\n", "9xx", "1x", "get", "search"]  # and near their patterns
NUMBERS = [0, 1, 2, 99, 100, 404, 599, 600, -1, 1.0, 0.5, 250.0, True]
ANY = st.recursive(
    st.none() | st.booleans() | st.sampled_from(NUMBERS) | st.sampled_from(STRINGS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(STRINGS), inner, max_size=2),
    max_leaves=4,
)


def _strategy(node: Any, depth: int = 0) -> Any:
    """Values for ``node``: mostly of its own type and near its bounds and patterns, now and then anything; an
    object gets mostly its own keys, now and then one it does not allow. Nearly valid cases are the ones where
    a single keyword decides."""
    while isinstance(node, dict) and "$ref" in node:
        node = DEFINITIONS[node["$ref"].rsplit("/", 1)[1]]
    if not isinstance(node, dict) or depth > 4:
        return ANY
    if "oneOf" in node and "properties" not in node:  # the assertion union: a branch each
        return st.one_of(*(_strategy(branch, depth + 1) for branch in node["oneOf"]))
    own: list[Any] = []
    if "enum" in node or "const" in node:
        own += [st.sampled_from(node.get("enum", [node.get("const")]))] * 3 + [st.just("zzz")]
    types = node.get("type", [])
    for kind in types if isinstance(types, list) else [types]:
        if kind == "string":
            own += [st.sampled_from(PLAUSIBLE)] * 3 + [st.sampled_from(STRINGS)]
        elif kind in ("integer", "number"):
            own += [st.sampled_from([1, 2, 100, 404, 599])] * 3 + [st.sampled_from(NUMBERS)]
        elif kind == "boolean":
            own.append(st.booleans())
        elif kind == "array":
            own.append(st.lists(_strategy(node.get("items", {}), depth + 1), max_size=3))
    if "properties" in node:
        keys = sorted(node["properties"])
        pairs = st.sampled_from([*keys, "qurey"]).flatmap(
            lambda key: st.tuples(st.just(key), _strategy(node["properties"].get(key, {}), depth + 1))
        )
        required = {k: _strategy(node["properties"][k], depth + 1) for k in node.get("required", [])}
        own.append(st.builds(lambda fixed, rest: {**fixed, **dict(rest)}, st.fixed_dictionaries(required),
                             st.lists(pairs, max_size=4)))  # fmt: skip
    elif node.get("type") == "object" or "additionalProperties" in node:
        own.append(st.dictionaries(st.sampled_from(STRINGS), ANY, max_size=2))
    return st.one_of(*own * 4, ANY) if own else ANY


CASES = _strategy(DEFINITIONS["case"])


@settings(max_examples=600, deadline=None)
@given(CASES)
def test_the_quick_verdict_agrees_with_jsonschema(case: dict[str, Any]) -> None:
    verdict = schemas._quick_case()(case)
    issues = schemas.jsonschema_issues(case, "case", definition="case")
    if verdict is True:
        assert issues == []
    elif verdict is False:
        assert issues != []
    assert (schemas.validate_case(case) == []) == (issues == [])  # the fast path changes no verdict


# valid cases that reach every keyword of the case schema (each assertion type, cleanup forms, captures)
ASSERTION_SEEDS: list[dict[str, Any]] = [
    {"type": "top_k_contains", "tool": "getMember", "k": 2}, {"type": "top_1_is", "tool": "t"},
    {"type": "selected_target", "equals": "t"}, {"type": "not_overridden"},
    {"type": "plan_contains_tool", "tool": "t"}, {"type": "plan_tools_equal", "tools": ["t"]},
    {"type": "plan_status", "equals": "synthesized"}, {"type": "no_user_input_slots"},
    {"type": "http_status", "in": [200, 201]}, {"type": "http_status", "range": [200, 299]},
    {"type": "http_status", "range": "2xx"}, {"type": "http_status", "equals": 201},
    {"type": "json_path_exists", "path": "$.id"}, {"type": "json_path_equals", "path": "$.a", "equals": 1},
    {"type": "json_path_equals", "path": "$.a", "value": None}, {"type": "json_path_matches", "path": "$.a", "regex": "^x"},
    {"type": "json_path_matches", "path": "$.a", "pattern": "^x"}, {"type": "json_path_count", "path": "$.a", "min": 0, "max": 3},
    {"type": "json_path_count", "path": "$.a", "equals": 2}, {"type": "response_schema", "status": 200},
    {"type": "header_present", "name": "ETag"}, {"type": "header_equals", "name": "A", "value": "b"},
    {"type": "latency_ms_below", "ms": 0.5}, {"type": "body_contains", "text": "ok"},
]  # fmt: skip
# valid cases that together reach every keyword of the case schema
SEEDS: list[dict[str, Any]] = [
    {"id": "s-1", "query": "find the member", "mode": "search", "expected_target": "getMember", "expected_top_k": 3,
     "tags": ["a", "b"], "flaky": False, "description": "d", "$schema": "x"},
    {"id": "p-1", "query": "plan it", "mode": "plan", "expected_plan_tools": ["a", "b"],
     "provided_entities": {"memberNo": 7, "name": "x"}, "llm_target": "t"},
    {"id": "e-1", "query": "create an order", "mode": "execute", "mutation_safety": "allow_mutation",
     "timeout_sec": 2.5, "follow_redirects": True, "captures": [{"name": "orderId", "path": "$.id"}],
     "cleanup": [{"tool": "deleteOrder", "arguments": {"id": "${captures.orderId}"}, "expect_status": [200, 204]},
                 {"method": "DELETE", "path": "/orders/1", "expect_status": 204}]},
    *({"id": "a-1", "query": "q", "assertions": [assertion]} for assertion in ASSERTION_SEEDS),
]  # fmt: skip
REPLACEMENTS = [None, True, 0, -1, 1.0, 99, 600, 0.0, "", "zzz", "-bad", "x\n", "9xx", [], [""], [1, 1], ["a", "a"],
                [200, 201, 202], {}, {"": 1}, {"qurey": 1}]  # fmt: skip
# keys added to a mapping that lacks them (the oneOf/anyOf alternatives of assertions and cleanup steps)
ADDED = {"in": [200], "range": "2xx", "equals": 1, "value": "b", "regex": "x", "pattern": "x", "min": 1, "max": 2,
         "tool": "t", "method": "GET", "path": "/p", "qurey": 1}  # fmt: skip


def _mutants(value: Any) -> Any:
    """``value`` with one change at one place: each value replaced, each key removed, one unknown key added."""
    yield from REPLACEMENTS
    if isinstance(value, dict):
        yield from ({**value, key: added} for key, added in ADDED.items() if key not in value)
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
            for changed in _mutants(value[key]):
                yield {**value, key: changed}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield value[:index] + value[index + 1 :]
            for changed in _mutants(item):
                yield [*value[:index], changed, *value[index + 1 :]]


def test_one_change_at_a_time() -> None:
    """Each seed is valid and taken by the fast path; every single change gets a verdict jsonschema agrees with,
    and the changes that leave the case valid take the fast path too (but for an integer written 1.0)."""
    valid = fast = 0
    for seed in SEEDS:
        assert (
            schemas.jsonschema_issues(seed, "case", definition="case") == []
            and schemas._quick_case()(seed) is True
        )
        for mutant in _mutants(seed):
            verdict = schemas._quick_case()(mutant)
            issues = schemas.jsonschema_issues(mutant, "case", definition="case")
            assert verdict is not (issues != []), mutant
            valid += not issues
            fast += verdict is True
    assert valid > 400 and fast > 0.97 * valid, (valid, fast)


def _real_cases() -> list[tuple[str, Any]]:
    out = []
    for path in sorted((ROOT / "gates").glob("*/*")):  # the suites' case files (release holds other shapes)
        if path.suffix not in (".yaml", ".json", ".jsonl") or path.parent.name == "release":
            continue
        _, doc = read_document(path, display=str(path))
        items = doc.data if isinstance(doc.data, list) else [doc.data]
        out += [(f"{path.relative_to(ROOT)}[{i}]", item) for i, item in enumerate(items)]
    return out


def test_every_case_of_the_repository_takes_the_fast_path() -> None:
    cases = _real_cases()
    assert len(cases) > 20  # search, plan and execute cases, with assertions, cleanup and captures
    assert any(case.get("assertions") for _, case in cases) and any(case.get("cleanup") for _, case in cases)
    for where, case in cases:
        assert schemas.jsonschema_issues(case, "case", definition="case") == [], where
        assert schemas._quick_case()(case) is True, where


@pytest.mark.parametrize(
    ("schema", "value", "verdict"),
    [
        ({"type": "integer"}, 3, True),
        ({"type": "integer"}, True, False),
        ({"type": "integer"}, 3.0, None),  # jsonschema counts 1.0 as an integer: left to it
        ({"enum": ["a", "b"]}, "b", True),
        ({"enum": [1, 2]}, 1, True),
        ({"enum": [1, 2]}, 3, False),
        ({"enum": [1, 2]}, True, False),  # jsonschema never counts a boolean as a number
        ({"enum": [1.5, 2]}, 3, None),  # a float among the members: left to jsonschema
        ({"const": 1}, 1.0, None),
        ({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"a": 1}, False),
        ({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"c": 1}, True),
        ({"if": {"required": ["a"]}, "else": {"required": ["b"]}}, {"c": 1}, False),
        ({"if": {"not": {}}, "then": {"required": ["b"]}}, {}, None),
        ({"then": {"required": ["b"]}}, {}, True),  # without "if", draft-07 ignores "then"
        ({"minProperties": 1}, {}, False),
        ({"maxProperties": 1}, {"a": 1, "b": 2}, False),
        ({"minProperties": 1}, [], True),
        ({"const": True}, 1, False),
        ({"minimum": 1}, "text", True),  # a bound does not apply to a string
        ({"pattern": "^a"}, "ba", False),
        ({"not": {"type": "string"}}, 3, None),  # a keyword this module does not decide
        ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}, True),
        ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1, "b": 2}, False),
        ({"anyOf": [{"type": "string"}, {"not": {}}]}, "x", True),
        ({"anyOf": [{"type": "string"}, {"not": {}}]}, 3, None),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}, True),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"b": "x"}, False),
        ({"propertyNames": {"minLength": 2}}, {"a": 1}, False),
        ({"uniqueItems": True}, ["a", "a"], False),
        ({"uniqueItems": True}, [1, True], None),
        ({"$ref": "#/definitions/s", "type": "integer", "definitions": {"s": {"type": "string"}}}, "x", True),
    ],
)
def test_verdicts(schema: dict[str, Any], value: Any, verdict: bool | None) -> None:
    assert compile_schema(schema)(value) is verdict


def _configs() -> list[tuple[str, Any]]:
    found = [ROOT / "qlab.yaml", *sorted((ROOT / "examples").rglob("qlab*.yaml"))]
    out = []
    for path in found:
        _, doc = read_document(path, display=str(path))
        out.append((str(path.relative_to(ROOT)), doc.data))
    return out


def test_every_config_of_the_repository_takes_the_fast_path() -> None:
    for where, data in _configs():
        assert schemas.jsonschema_issues(data, "config") == [], where
        assert schemas._quick("config", None)(data) is True, where


def test_one_change_at_a_time_in_a_config() -> None:
    """qlab.yaml with one change at one place: the quick verdict never contradicts jsonschema's, and a change
    that leaves the config valid mostly takes the fast path (so `qlab run` never imports jsonschema)."""
    _, config = _configs()[0]
    check = schemas._quick("config", None)
    valid = fast = total = 0
    for index, mutant in enumerate(_mutants(config)):
        if index % 4:  # every fourth change: each kind of change at each depth, in a quarter of the time
            continue
        total += 1
        verdict = check(mutant)
        issues = schemas.jsonschema_issues(mutant, "config")
        assert verdict is not (issues != []), mutant
        valid += not issues
        fast += verdict is True
    assert total > 500 and valid > 50 and fast > 0.9 * valid, (total, valid, fast)

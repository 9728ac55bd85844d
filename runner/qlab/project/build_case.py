"""Schema-valid case data -> the frozen :class:`~qlab.project.model.Case`.

Like ``build_config`` it trusts the shape. Two normalisations happen here so every consumer sees one spelling:
``mode`` defaults to the suite's mode, and assertion argument synonyms become the names the assertion
registry reads (``value`` -> ``equals`` for json_path_equals / header_equals, ``pattern`` -> ``regex`` for
json_path_matches). ``Case.raw`` keeps the case exactly as written (the reader's dict itself).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

from qlab.project.model import Assertion, Capture, Case, ClaimsCheck, CleanupStep, Mode, Origin, Suite

# assertion type -> {synonym: canonical argument name}
SYNONYMS: dict[str, dict[str, str]] = {
    "json_path_equals": {"value": "equals"},
    "header_equals": {"value": "equals"},
    "json_path_matches": {"pattern": "regex"},
}


def build_assertion(data: Mapping[str, Any], origin: Origin) -> Assertion:
    kind = str(data["type"])
    renames = SYNONYMS.get(kind, {})
    args = {renames.get(key, key): value for key, value in data.items() if key != "type"}
    return Assertion(kind, args, origin)


def build_cleanup(data: Mapping[str, Any]) -> CleanupStep:
    status = data.get("expect_status", ())
    return CleanupStep(
        tool=data.get("tool"),
        method=data.get("method"),
        path=data.get("path"),
        arguments=dict(data.get("arguments", {})),
        expect_status=(status,) if isinstance(status, int) else tuple(int(s) for s in status),
    )


_OPTIONAL = frozenset({"expected_target", "expected_top_k", "llm_target", "mutation_safety", "timeout_sec", "flaky",
                       "follow_redirects", "description", "name", "status", "created_at", "trace"})  # fmt: skip
_NO_ENTITIES: Mapping[str, Any] = MappingProxyType({})  # shared by the cases that provide none (or no trace)


def _claims(data: Any) -> ClaimsCheck | None:
    """The case's claims check (``claims: {}`` uses every default), None when the case has none."""
    if not isinstance(data, Mapping):
        return None
    keys = ("claims", "evidence", "citation_required", "min_citation_coverage", "min_evidence_quality")
    return ClaimsCheck(**{key: data[key] for key in keys if key in data})


def build_case(
    data: Mapping[str, Any], *, suite: Suite, file: str, origin: Origin, assertion_origins: list[Origin]
) -> Case:
    """The Case of schema-valid ``data`` in ``suite``; ``file`` is relative to the config folder.

    Built once per case of a run, and held until it ends, so it holds as little as it can: ``raw`` is
    ``data`` itself (the reader's dict, not a copy), absent lists are the shared ``()``, absent mappings the
    shared empty one, and the strings many cases repeat (mode, expected target, tags) are interned (the
    expected target in ``raw`` too).
    """
    get = data.get
    optional = {key: value for key, value in data.items() if key in _OPTIONAL}
    if "expected_target" in optional:
        target = optional["expected_target"] = sys.intern(optional["expected_target"])
        if type(data) is dict:  # raw holds the shared string too (one per tool, not one per case)
            data["expected_target"] = target
    if "trace" not in optional:
        optional["trace"] = _NO_ENTITIES  # not a new empty dict per case
    entities, steps, captures, tags, tools = (
        get("provided_entities"), get("cleanup"), get("captures"), get("tags"), get("expected_plan_tools"))  # fmt: skip
    return Case(
        id=str(data["id"]),
        mode=cast(Mode, sys.intern(get("mode", suite.mode))),
        query=str(data["query"]),
        suite=suite.name,
        file=file,
        origin=origin,
        provided_entities=dict(entities) if entities else _NO_ENTITIES,
        cleanup=tuple(build_cleanup(step) for step in steps) if steps else (),
        captures=tuple(Capture(c["name"], c["path"]) for c in captures) if captures else (),
        assertions=tuple(
            build_assertion(item, where)
            for item, where in zip(get("assertions", ()), assertion_origins, strict=True)
        )
        if assertion_origins
        else (),
        tags=tuple(sys.intern(str(t)) for t in tags) if tags else (),
        expected_plan_tools=tuple(str(t) for t in tools) if tools else (),
        claims=_claims(get("claims")),
        raw=data,
        **optional,
    )

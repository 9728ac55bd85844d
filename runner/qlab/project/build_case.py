"""Schema-valid case data -> the frozen :class:`~qlab.project.model.Case`.

Like ``build_config`` it trusts the shape. Two normalisations happen here so every consumer sees one spelling:
``mode`` defaults to the suite's mode, and assertion argument synonyms become the names the assertion
registry reads (``value`` -> ``equals`` for json_path_equals / header_equals, ``pattern`` -> ``regex`` for
json_path_matches). ``Case.raw`` keeps the case exactly as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.project.model import Assertion, Capture, Case, CleanupStep, Origin, Suite

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


def build_case(
    data: Mapping[str, Any], *, suite: Suite, file: str, origin: Origin, assertion_origins: list[Origin]
) -> Case:
    """The Case of schema-valid ``data`` in ``suite``; ``file`` is relative to the config folder."""
    optional = {key: data[key] for key in ("expected_target", "expected_top_k", "llm_target", "mutation_safety",
                                            "timeout_sec", "flaky", "follow_redirects", "description") if key in data}  # fmt: skip
    return Case(
        id=str(data["id"]),
        mode=data.get("mode", suite.mode),
        query=str(data["query"]),
        suite=suite.name,
        file=file,
        origin=origin,
        provided_entities=dict(data.get("provided_entities", {})),
        cleanup=tuple(build_cleanup(step) for step in data.get("cleanup", [])),
        captures=tuple(Capture(c["name"], c["path"]) for c in data.get("captures", [])),
        assertions=tuple(
            build_assertion(item, where)
            for item, where in zip(data.get("assertions", []), assertion_origins, strict=True)
        ),
        tags=tuple(str(t) for t in data.get("tags", [])),
        expected_plan_tools=tuple(str(t) for t in data.get("expected_plan_tools", [])),
        raw=dict(data),
        **optional,
    )

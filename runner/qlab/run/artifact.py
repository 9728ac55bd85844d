"""The result artifact (``schemas/result.schema.json``): assembled from the run, summarized from its cases,
written atomically, read back with located errors.

Everything derived from the cases (suite metrics and counts, acceptance metrics, categories, scorecard and
decision) is computed by ``summarize``, which ``qlab merge`` calls again on the merged cases: a merged result
is judged exactly like one unsharded run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from math import copysign
from pathlib import Path
from typing import Any

from qlab.adapters.atomic import write_atomic
from qlab.contracts import metrics
from qlab.contracts.errors import InputError
from qlab.contracts.results import read_rows, to_json
from qlab.contracts.resultschema import artifact_problem
from qlab.run import gates as gates_mod
from qlab.run import postrun
from qlab.run import scorecard as scorecard_mod
from qlab.run.categories import by_category

SCHEMA_VERSION = 1
# what the artifact records of a suite's configuration (its ``suites`` section adds metrics and counts)
SUITE_KEYS = (
    "mode",
    "category",
    "required",
    "must_pass",
    "cadence",
    "target_type",
    "target_ref",
    "created_at",
)
# top-level keys in the order they are written (readers diff artifacts; a stable order helps)
KEY_ORDER = (
    "schema_version",
    "run_id",
    "status",
    "target_version",
    "started_at",
    "ended_at",
    "duration_ms",
    "qlab_version",
    "project",
    "fingerprint",
    "provenance",
    "shard",
    "warnings",
    "cases",
    "suites",
    "skipped_suites",
    "archived_cases",
    "stages",
    "gates",
    "metrics",
    "categories",
    "scorecard",
    "not_reached",
    "postrun",
    "guards",
    "readiness",
    "decision",
)


def case_sort_key(suite_order: Mapping[str, int]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """Cases are kept in configuration order: suite as written, then file and line, then id. A merge restores
    the very same order from the shards."""

    def key(case: Mapping[str, Any]) -> tuple[Any, ...]:
        return (
            suite_order.get(str(case["suite"]), len(suite_order)),
            str(case.get("file", "")),
            int(case.get("line", 0)),
            str(case["case_id"]),
        )

    return key


def suite_section(
    suites: Mapping[str, Mapping[str, Any]],
    cases: Sequence[Mapping[str, Any]],
    *,
    extra: Mapping[str, Mapping[str, float | None]] | None = None,
) -> dict[str, dict[str, Any]]:
    """``suites`` maps a suite name to its ``{mode, category, required, must_pass, cadence}``; metrics and counts
    come from the cases, plus any ``extra`` metrics a stage reported that qlab does not compute itself."""
    grouped: dict[str, list[Mapping[str, Any]]] = {name: [] for name in suites}
    for case in cases:
        grouped.setdefault(str(case["suite"]), []).append(case)
    stop = metrics.stopped_at(cases)  # each suite is measured with the run's stop: a stage it never reached
    out: dict[str, dict[str, Any]] = {}
    for name, info in suites.items():
        figures = metrics.case_metrics(grouped[name], stop=stop)
        for metric, value in (extra or {}).get(name, {}).items():
            figures.setdefault(metric, value)
        out[name] = {
            "mode": info.get("mode"),
            "category": info.get("category", "flow"),
            "required": bool(info.get("required", True)),
            "must_pass": gates_mod.suite_rule(info).must_pass,
            "cadence": info.get("cadence"),
            "target_type": info.get("target_type"),
            "target_ref": info.get("target_ref"),
            "created_at": info.get("created_at"),
            "metrics": figures,
            "counts": metrics.counts(grouped[name]),
        }
    return out


def scorecard(
    artifact: Mapping[str, Any], *, budget: Any = None, reviews: Sequence[str] = ()
) -> dict[str, float | None]:
    """The ten-dimension scorecard of the run (``qlab.run.scorecard``). ``reviews``: human decisions made
    outside the run (``qlab.governance.learning.reviews.decisions``)."""
    return scorecard_mod.compute(artifact, budget=budget, reviews=reviews)


def summarize(
    artifact: dict[str, Any],
    *,
    exit_zero: bool = False,
    budget: Any = None,
    extra_suite_metrics: Mapping[str, Mapping[str, float | None]] | None = None,
    with_scorecard: bool = True,
    reviews: Sequence[str] = (),
) -> dict[str, Any]:
    """(Re)compute every section derived from the cases and gates: each case's ``duration_ms``,
    ``actual_output`` and ``metrics``, suite metrics and counts, acceptance metrics, categories, the post-run
    section, run-level guards, scorecard and decision. ``artifact["suites"]`` must hold each suite's
    ``{mode, category, required, cadence}``; ``prerun`` the pre-run guard results. Returns the artifact."""
    cases = artifact["cases"]
    shared: dict[tuple[Any, ...], dict[str, Any]] = {}
    for case in cases:
        case_view(case, shared)
    artifact["suites"] = suite_section(artifact.get("suites", {}), cases, extra=extra_suite_metrics)
    artifact["metrics"] = metrics.acceptance(cases)
    artifact["categories"] = by_category(artifact)  # all seven eval categories, with their suites
    artifact["postrun"] = postrun.section(cases)
    return conclude(
        artifact, exit_zero=exit_zero, budget=budget, with_scorecard=with_scorecard, reviews=reviews
    )


def conclude(
    artifact: dict[str, Any],
    *,
    exit_zero: bool = False,
    budget: Any = None,
    with_scorecard: bool = True,
    reviews: Sequence[str] = (),
) -> dict[str, Any]:
    """The sections that depend on the gates and checks, not on the cases' metrics: schema validity, the
    run-level guard list, the decision and the scorecard. (A run's learn gate only changes these.) The learn
    gate's provisional copy goes without the scorecard: its numbers come from data that copy already holds."""
    stages = artifact.get("stages", {}).values()
    checked = sum(int(s.get("details", {}).get("schema", {}).get("checked", 0)) for s in stages)
    valid = sum(int(s.get("details", {}).get("schema", {}).get("valid", 0)) for s in stages)
    artifact["metrics"]["schema_validity"] = None if checked == 0 else round(valid / checked, 6)
    prerun = artifact.get("prerun", [])
    artifact["guards"] = [*prerun, *(g for stage in stages for g in stage.get("guards", ()))]
    artifact["decision"] = gates_mod.decide(
        artifact["gates"],
        prerun=prerun,
        exit_zero=exit_zero,
        cases=artifact.get("cases") or [],
        suites=artifact.get("suites") or {},
    )
    # the eval run's status: the provisional copy is written while the run is still going
    if not with_scorecard:
        artifact["status"] = "running"
    else:
        artifact["status"] = "failed" if artifact["decision"]["verdict"] == "error" else "completed"
    card = scorecard(artifact, budget=budget, reviews=reviews) if with_scorecard else None
    if card is not None:
        artifact["scorecard"] = card
    else:
        artifact.pop("scorecard", None)
    artifact["not_reached"] = not_reached(artifact)
    return ordered(artifact)


def not_reached(artifact: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the artifact that are ``null`` because their stage was never reached (a blocked gate kept
    the cases from it; ``qlab.contracts.metrics.not_reached``): the run's ``metrics``, each suite's, the ``scorecard``.
    Every output shows them as ``n/a (not reached)``, never as 0."""
    cases = artifact.get("cases") or []
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for case in cases:
        grouped.setdefault(str(case.get("suite")), []).append(case)
    stop = metrics.stopped_at(cases)
    suites = {
        name: found
        for name, info in (artifact.get("suites") or {}).items()
        if (found := metrics.not_reached(info.get("metrics") or {}, grouped.get(name, ()), stop=stop))
    }
    return {
        "metrics": metrics.not_reached(artifact.get("metrics") or {}, cases, stop=stop),
        "suites": suites,
        "scorecard": scorecard_mod.not_reached(artifact.get("scorecard") or {}, cases),
    }


def case_view(case: dict[str, Any], shared: dict[tuple[Any, ...], dict[str, Any]] | None = None) -> None:
    """A case's derived fields, from its stage objects (in place): ``duration_ms``, ``actual_output`` (only for
    cases that ran) and ``metrics`` (the scorecard dimensions it has data for).

    ``shared``: equal ``actual_output`` and ``metrics`` objects of flat values are one object for every case that
    has them (read-only from here on, like the case: writers only read them). A large search run has a few
    thousand distinct ones (``{"correctness": 1.0}``, a rank and a tool) for all its cases."""
    case["duration_ms"] = postrun.duration_ms(case)
    if case.get("status") in postrun.EVALUATED:
        case["actual_output"] = _shared(postrun.actual_output(case), shared)
    else:  # a case a merge rolled back to blocked keeps nothing it never did
        case.pop("actual_output", None)
        case.pop("trajectory", None)
    case["metrics"] = _shared(scorecard_mod.case_metrics(case), shared)


_FLAT = frozenset({str, int, float, bool, type(None)})


def _shared(value: dict[str, Any], shared: dict[tuple[Any, ...], dict[str, Any]] | None) -> dict[str, Any]:
    """``value``, or the equal dict seen before (only dicts of flat values: their items are the key)."""
    if shared is None or len(shared) >= 100_000:
        return value
    for item in value.values():
        if type(item) not in _FLAT or (type(item) is float and item == 0.0 and copysign(1.0, item) < 0):
            return value  # (-0.0 equals 0.0 but is written "-0.0")
    # True == 1 == 1.0 as keys: the types are part of the key, so 1 and 1.0 (or true) are never merged
    key = (*value.items(), *map(type, value.values()))
    return shared.setdefault(key, value)


def ordered(artifact: Mapping[str, Any]) -> dict[str, Any]:
    """The artifact with its keys in the documented order (unknown keys last, as found)."""
    out = {key: artifact[key] for key in KEY_ORDER if key in artifact}
    out.update({k: v for k, v in artifact.items() if k not in out})
    return out


def chunks(artifact: Mapping[str, Any]) -> Iterator[str]:
    """The artifact as written, in pieces: UTF-8 JSON, one top-level key per line and one case per line.

    Compact values keep json's C encoder (``indent`` would switch to its pure-Python one); one case per line keeps
    diffs and ``grep`` readable; pieces keep a large artifact from being built as one string."""
    yield "{"
    for index, (key, value) in enumerate(artifact.items()):
        yield "\n " if index == 0 else ",\n "
        if key == "cases" and isinstance(value, list) and value:
            yield '"cases": [\n  '
            for n, case in enumerate(map(_ENCODER.encode, value)):  # each line made, written, dropped
                yield case if n == 0 else ",\n  " + case
            yield "\n ]"
        else:
            yield f"{_ENCODER.encode(key)}: {_ENCODER.encode(value)}"
    yield "\n}\n"


def dumps(artifact: Mapping[str, Any]) -> str:
    """The artifact as one string (see ``chunks``)."""
    return "".join(chunks(artifact))


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=to_json)


def write(path: str | Path, artifact: Mapping[str, Any]) -> Path:
    """Write the result artifact atomically."""
    return write_atomic(path, chunks(artifact))


def read(path: str | Path) -> dict[str, Any]:
    """Load a result artifact, or raise InputError saying which file and what is wrong with it."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{p}: result artifact not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start}); is it a result.json?"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}:{exc.colno}: $: invalid JSON: {exc.msg}") from None
    except RecursionError:  # the C decoder recurses: nesting deeper than the interpreter allows
        raise InputError(f"{p}: $: JSON nested too deeply to read; is it a result.json?") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot be read: {exc.strerror}") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: $: a result artifact is a JSON object, got {type(data).__name__}")
    for key, kind in (("schema_version", int), ("cases", list), ("gates", list), ("suites", dict)):
        if not isinstance(data.get(key), kind):
            raise InputError(
                f"{p}: $.{key}: missing or not a{'n' if kind is int else ''} {kind.__name__}; is it a qlab result?"
            )
    if data["schema_version"] != SCHEMA_VERSION:
        raise InputError(
            f"{p}: $.schema_version: {data['schema_version']} is not supported (expected {SCHEMA_VERSION})"
        )
    problem = artifact_problem(data)
    if problem:
        raise InputError(f"{p}: {problem} (schemas/result.schema.json); was it edited by hand?")
    read_rows(data["cases"])
    return data

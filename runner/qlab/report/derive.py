"""Numbers the reports derive from result artifacts (plain dicts, as loaded from JSON).

Reports read artifacts, never stages: everything here works on the artifact's documented shape and tolerates
missing optional sections (a hand-written or older artifact), so a report never crashes on a partial result.
``verdict`` is the one word every report prints for the run; ``hit_at_k_curve``, ``failure_classes``,
``case_diff``, ``metric_trends``, ``stage_latency`` and ``since_last`` give the figures the reports share."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.contracts.changes import CHANGE_KINDS, change_kind
from qlab.contracts.metrics import (
    NOT_REACHED as NOT_REACHED,
)  # "n/a (not reached)": a figure its cases never reached
from qlab.contracts.metrics import SCORECARD_DIMENSIONS
from qlab.contracts.metrics import unstable as unstable  # a passed case that did not pass every repeat: flaky
from qlab.contracts.reasons import REASONS

Artifact = Mapping[str, Any]

# the acceptance metrics, as keys of the artifact's ``metrics`` object
ACCEPTANCE_METRICS: tuple[tuple[str, str], ...] = (
    ("search_hit_at_k", "search hit@K"),
    ("search_top_1", "search Top-1"),
    ("target_selector_accuracy", "target selector accuracy"),
    ("plan_hit_rate", "plan hit rate"),
    ("execute_read_success_rate", "execute read success rate"),
    ("structured_failure_rate", "structured failure rate"),
)
STAGE_LATENCY_KEYS: tuple[str, ...] = ("search", "target_selection", "plan", "execute")
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "blocked", "skipped")


VERDICTS: tuple[str, ...] = ("pass", "block", "error", "cancelled")


def verdict(decision: Any) -> str:
    """``pass``, ``block``, ``error`` or ``cancelled`` (SIGINT or SIGTERM stopped it: a partial result): the one word
    every report (console, summary, JUnit, HTML, GitHub) prints for a run, upper-cased. Exit code 2 is ``error`` whatever the verdict field says: an artifact written before
    qlab had the word said ``block`` there, and a run that could not decide must never read BLOCK."""
    decision = as_mapping(decision)
    word = str(decision.get("verdict", ""))
    if decision.get("exit_code") == 2 or word == "error":
        return "error"
    return word if word in VERDICTS else "unknown"


def check_name(guard: Mapping[str, Any]) -> str:
    """A check as every report names it: ``host_allowlist [execute]``, with its subject when it has one
    (``auth_readiness [pre-run]: dev``); the JUnit testcase has the same name."""
    name = f"{guard.get('guard')} [{guard.get('stage')}]"
    return f"{name}: {guard['subject']}" if guard.get("subject") else name


def as_mapping(value: Any) -> Mapping[str, Any]:
    # `type(...) is dict` first: the common case, cheaper than an isinstance check against the Mapping ABC
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def cases_of(result: Artifact) -> list[Mapping[str, Any]]:
    """The artifact's cases that are objects (anything else is ignored, not fatal)."""
    cases = result.get("cases")
    return [c for c in cases if type(c) is dict or isinstance(c, Mapping)] if isinstance(cases, list) else []


def number(value: Any) -> float | None:
    """A finite float, or None (booleans and strings are not numbers here)."""
    kind = type(value)
    if kind is float or kind is int:  # the common case, without the ABC machinery
        return float(value) if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def not_reached(result: Artifact, section: str = "metrics", *, suite: str | None = None) -> frozenset[str]:
    """The names of ``section`` (``metrics``, ``scorecard``; a suite's metrics with ``suite``) whose value the
    artifact records as not reached (``not_reached``): every report shows them as ``NOT_REACHED``, never 0."""
    recorded = as_mapping(result.get("not_reached"))
    names = as_mapping(recorded.get("suites")).get(suite) if suite is not None else recorded.get(section)
    return frozenset(str(n) for n in names) if isinstance(names, list) else frozenset()


def figure(value: Any, *, reached: bool = True, empty: str = "—", digits: int = 3) -> str:
    """A figure as the text reports print it: ``digits`` decimals, ``empty`` for no data, ``NOT_REACHED`` for a
    figure whose stage its cases never reached."""
    found = number(value)
    if found is None:
        return empty if reached else NOT_REACHED
    return f"{found:.{digits}f}" if isinstance(value, float) else str(value)


def threshold_actual(row: Mapping[str, Any], *, empty: str = "—") -> str:
    """A gate threshold's measured value (``figure``): not reached when its gate never ran on those cases."""
    return figure(row.get("actual"), reached=not row.get("not_reached"), empty=empty)


def not_gating(result: Artifact) -> Callable[[Mapping[str, Any]], str]:
    """A function telling, for a failing case of ``result``, why it does not gate ("" when it does): a flaky or
    draft case, a ``required: false`` suite, or a failure its gate tolerated (``gates[].failures``: the gate that
    answers for it did not block on its suite). Every report words a non-gating failure from it: an annotation
    ``::warning`` (never ``::error``), JUnit's ``does not gate (why)``, the summary's non-gating section."""
    suites = as_mapping(result.get("suites"))
    by_case: dict[str, str] = {}
    by_suite: dict[str, str] = {}
    errored: set[str] = set()
    for gate in result.get("gates") or ():
        gate = as_mapping(gate)
        name = str(gate.get("name"))
        for error in gate.get("errors") or ():
            errored.update(str(i) for i in as_mapping(error).get("case_ids") or ())
        deferred = any("deferred" in str(w) for w in gate.get("warnings") or ())
        for entry in gate.get("failures") or ():
            entry = as_mapping(entry)
            if entry.get("blocks"):
                said = ""
            elif deferred:
                said = f"gate {name} leaves its tolerance to qlab merge, which counts the failing cases of all shards"
            else:
                said = f"tolerated by gate {name}: {entry.get('tolerance') or 'within its tolerance'}"
            listed = [str(as_mapping(c).get("case_id")) for c in entry.get("cases") or ()]
            for case_id in listed:
                by_case.setdefault(case_id, said)
            if int(entry.get("failing") or 0) > len(listed):  # only the first ones are listed
                by_suite.setdefault(str(entry.get("suite")), said)

    def why(case: Mapping[str, Any]) -> str:
        if case.get("flaky"):
            return "flaky case"
        if case.get("lifecycle") == "draft":
            return "draft case"
        if not as_mapping(suites.get(str(case.get("suite")))).get("required", True):
            return "suite is required: false"
        case_id = str(case.get("case_id"))
        if case_id in errored:
            return ""
        return by_case.get(case_id, by_suite.get(str(case.get("suite")), ""))

    return why


def shard_label(result: Artifact) -> str | None:
    """What a report says of the run's shard: ``shard 2/3`` for one shard, ``merged from 3 shards`` for the result
    of ``qlab merge``; None for an unsharded run."""
    shard = as_mapping(result.get("shard"))
    if not shard:
        return None
    merged = shard.get("merged_from")
    if isinstance(merged, list):
        return f"merged from {len(merged)} shard{'' if len(merged) == 1 else 's'}"

    def whole(value: Any) -> str:  # numbers only: the label is printed as it is (an edited artifact is data)
        return str(value) if type(value) is int else "?"

    return f"shard {whole(shard.get('index'))}/{whole(shard.get('total'))}"


def status_counts(result: Artifact) -> dict[str, int]:
    counts = Counter(str(c.get("status", "")) for c in cases_of(result))
    return {status: counts.get(status, 0) for status in STATUSES}


# --------------------------------------------------------------------------------------------- hit@K


@dataclass(frozen=True, slots=True)
class HitCurve:
    """``series[name][k-1]`` = share of that group's search cases whose hit rank is ≤ k."""

    ks: tuple[int, ...]
    series: Mapping[str, tuple[float, ...]]
    sizes: Mapping[str, int]  # cases per series
    configured_k: int | None  # the K the cases asked for (their most common ``search.top_k``)


def hit_at_k_curve(cases: Sequence[Mapping[str, Any]], *, max_series: int = 6) -> HitCurve:
    """The hit@K curve over every case that has a ``search`` object, overall and per suite.

    A case whose expected target was not found (``hit_rank`` null, or ``hit`` false) counts as a miss at every K.
    """
    ranks: dict[str, list[int | None]] = {}
    top_ks: Counter[int] = Counter()
    max_k = 1
    for case in cases:
        search = case.get("search")
        if not isinstance(search, Mapping):
            continue
        rank = number(search.get("hit_rank"))
        hit = search.get("hit", rank is not None)
        value = int(rank) if rank is not None and rank >= 1 and hit is not False else None
        ranks.setdefault("all", []).append(value)
        ranks.setdefault(str(case.get("suite", "")), []).append(value)
        top_k = number(search.get("top_k"))
        if top_k is not None and top_k >= 1:
            top_ks[int(top_k)] += 1
            max_k = max(max_k, int(top_k))
        if value is not None:
            max_k = max(max_k, value)
    if not ranks:
        return HitCurve(ks=(), series={}, sizes={}, configured_k=None)
    suites = [name for name in ranks if name != "all"]
    # one suite: its curve equals "all"; many: show each (capped, largest first) beside "all"
    names = (
        ["all"]
        if len(suites) <= 1
        else ["all", *sorted(suites, key=lambda s: (-len(ranks[s]), s))[: max_series - 1]]
    )
    ks = tuple(range(1, max_k + 1))
    series = {
        name: tuple(sum(1 for r in ranks[name] if r is not None and r <= k) / len(ranks[name]) for k in ks)
        for name in names
    }
    configured = top_ks.most_common(1)[0][0] if top_ks else None
    return HitCurve(ks=ks, series=series, sizes={n: len(ranks[n]) for n in names}, configured_k=configured)


# --------------------------------------------------------------------------------------------- failures


@dataclass(frozen=True, slots=True)
class FailureClass:
    reason: str
    stage: str
    count: int
    meaning: str
    hint: str
    case_ids: tuple[str, ...]  # the first few, as examples


def failure_classes(cases: Sequence[Mapping[str, Any]], *, examples: int = 5) -> list[FailureClass]:
    """Failing cases grouped by reason code, most frequent first; the stage is the failure's own."""
    groups: dict[tuple[str, str], list[str]] = {}
    for case in cases:
        failure = case.get("failure")
        if not isinstance(failure, Mapping):
            continue
        reason = str(failure.get("reason") or "unclassified")
        stage = str(failure.get("stage") or "")
        groups.setdefault((reason, stage), []).append(str(case.get("case_id", "")))
    out: list[FailureClass] = []
    for (reason, stage), ids in groups.items():
        known = REASONS.get(reason)
        out.append(
            FailureClass(
                reason=reason,
                stage=stage or (known.stage if known else ""),
                count=len(ids),
                meaning=known.meaning if known else "not a registered reason code",
                hint=known.hint if known else "",
                case_ids=tuple(ids[:examples]),
            )
        )
    return sorted(out, key=lambda f: (-f.count, f.reason, f.stage))


# --------------------------------------------------------------------------------------------- diff

# the kinds and their meaning are those of ``qlab.contracts.changes`` (``qlab promote`` judges them; this only shows)
DIFF_KINDS: tuple[str, ...] = CHANGE_KINDS


@dataclass(frozen=True, slots=True)
class CaseChange:
    case_id: str
    suite: str
    kind: str  # one of DIFF_KINDS
    before: str | None  # status in the baseline; None when absent there
    after: str | None
    before_reason: str = ""
    after_reason: str = ""
    required: bool = True  # the suite is required or the case is critical: its regression always blocks


@dataclass(frozen=True, slots=True)
class CaseDiff:
    changes: tuple[CaseChange, ...]  # every case whose outcome is news (all but "passing"), regressions first
    counts: Mapping[str, int]  # every kind, "passing" included


def _reason(case: Mapping[str, Any] | None) -> str:
    failure = case.get("failure") if case else None
    return str(as_mapping(failure).get("reason", "")) if failure else ""


def _required_suites(*runs: Artifact) -> dict[str, bool]:
    """``{suite: required}``; the first run that says wins. Suites are required unless qlab.yaml says otherwise."""
    out: dict[str, bool] = {}
    for run in reversed(runs):
        for name, info in as_mapping(run.get("suites")).items():
            if "required" in as_mapping(info):
                out[str(name)] = bool(as_mapping(info)["required"])
    return out


def case_diff(baseline: Artifact, candidate: Artifact) -> CaseDiff:
    """Baseline → candidate per case id, classed by ``qlab.contracts.changes`` (like with like: a case one run did not
    judge is unevaluated). Cases passing in both runs are only counted."""
    before = {str(c.get("case_id")): c for c in cases_of(baseline)}
    after = {str(c.get("case_id")): c for c in cases_of(candidate)}
    required = _required_suites(candidate, baseline)
    changes: list[CaseChange] = []
    passing = 0
    # a case passing in both runs is the common one (no news): counted before the general classing below
    for case_id in [k for k, a in after.items() if a.get("status") == "passed"]:
        b = before.get(case_id)
        if b is not None and b.get("status") == "passed":  # change_kind's "passing", without the call
            passing += 1
            del before[case_id], after[case_id]
    for case_id in before.keys() | after.keys():
        b, a = before.get(case_id), after.get(case_id)
        b_status = str(b.get("status")) if b else None
        a_status = str(a.get("status")) if a else None
        kind = change_kind(b, a)
        if kind == "passing":
            passing += 1  # no news: counted, not listed (a 100,000-case run is mostly this)
            continue
        either = a if a is not None else b
        assert either is not None  # the id came from one of the two runs
        changes.append(
            CaseChange(
                case_id,
                str(either.get("suite", "")),
                kind,
                b_status,
                a_status,
                _reason(b),
                _reason(a),
                required=bool(either.get("critical")) or required.get(str(either.get("suite", "")), True),
            )
        )
    order = {kind: i for i, kind in enumerate(DIFF_KINDS)}
    changes.sort(key=lambda c: (order[c.kind], c.suite, c.case_id))
    counts = Counter(c.kind for c in changes)
    counts["passing"] = passing
    return CaseDiff(changes=tuple(changes), counts={kind: counts.get(kind, 0) for kind in DIFF_KINDS})


# --------------------------------------------------------------------------------------------- trends and latency


def pass_rate(result: Artifact) -> float | None:
    counts = status_counts(result)
    total = sum(counts.values())
    return counts["passed"] / total if total else None


def metric_trends(results: Sequence[Artifact]) -> dict[str, list[float | None]]:
    """``{label: [value per run]}`` for the acceptance metrics, the pass rate and the scorecard dimensions.

    A metric with no value in any run is left out; a run without it gets ``None`` (a gap, not a zero).
    """
    out: dict[str, list[float | None]] = {}
    rows: list[tuple[str, list[float | None]]] = [
        (label, [number(as_mapping(r.get("metrics")).get(key)) for r in results])
        for key, label in ACCEPTANCE_METRICS
    ]
    rows.append(("case pass rate", [pass_rate(r) for r in results]))
    rows.extend(
        (f"scorecard: {dim}", [number(as_mapping(r.get("scorecard")).get(dim)) for r in results])
        for dim in SCORECARD_DIMENSIONS
    )
    for label, values in rows:
        if any(v is not None for v in values):
            out[label] = values
    return out


def trends_not_reached(results: Sequence[Artifact]) -> dict[str, list[bool]]:
    """``{label: [not reached in that run]}`` for the labels of ``metric_trends``: a gap that is "not reached"."""
    out: dict[str, list[bool]] = {}
    for key, label in ACCEPTANCE_METRICS:
        out[label] = [key in not_reached(r) for r in results]
    for dim in SCORECARD_DIMENSIONS:
        out[f"scorecard: {dim}"] = [dim in not_reached(r, "scorecard") for r in results]
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return ordered[index]


def stage_latency(result: Artifact) -> dict[str, tuple[float | None, float | None]]:
    """``{stage: (p50, p95)}`` in ms: from ``metrics.latency_ms`` when present, else computed from the cases."""
    stored = as_mapping(as_mapping(result.get("metrics")).get("latency_ms"))
    out: dict[str, tuple[float | None, float | None]] = {}
    for stage, values in stored.items():
        pair = as_mapping(values)
        out[str(stage)] = (number(pair.get("p50")), number(pair.get("p95")))
    if out:
        return out
    samples: dict[str, list[float]] = {}
    for case in cases_of(result):
        for stage, ms in as_mapping(case.get("latency_ms")).items():
            value = number(ms)
            if value is not None:
                samples.setdefault(str(stage), []).append(value)
    ordered = [s for s in STAGE_LATENCY_KEYS if s in samples] + sorted(set(samples) - set(STAGE_LATENCY_KEYS))
    return {stage: (percentile(samples[stage], 50), percentile(samples[stage], 95)) for stage in ordered}


# --------------------------------------------------------------------------------------------- since the last run


@dataclass(frozen=True, slots=True)
class SinceLast:
    """What changed between the previous run and this one (``qlab.contracts.changes``' classes, like with like)."""

    previous_run: str
    previous_verdict: str
    newly_failing: tuple[CaseChange, ...]  # regressed, or a new case that fails
    newly_passing: tuple[CaseChange, ...]  # fixed
    metrics: tuple[
        tuple[str, float | None, float | None], ...
    ]  # (label, before, after) of the metrics that moved

    @property
    def quiet(self) -> bool:
        """Nothing changed: no case changed outcome and no acceptance metric moved."""
        return not (self.newly_failing or self.newly_passing or self.metrics)


def since_last(previous: Artifact, current: Artifact) -> SinceLast:
    """The changes from ``previous`` to ``current``: newly failing cases (``regressed``, ``new_failing``), newly
    passing ones (``fixed``) and every acceptance metric whose value moved (``None``: no data in that run)."""
    diff = case_diff(previous, current)
    failing = tuple(c for c in diff.changes if c.kind in ("regressed", "new_failing"))
    passing = tuple(c for c in diff.changes if c.kind == "fixed")
    moved = []
    before, after = as_mapping(previous.get("metrics")), as_mapping(current.get("metrics"))
    for key, label in ACCEPTANCE_METRICS:
        a, b = number(before.get(key)), number(after.get(key))
        if a != b and not (a is not None and b is not None and abs(a - b) < 5e-7):
            moved.append((label, a, b))
    return SinceLast(
        previous_run=str(previous.get("run_id") or ""),
        previous_verdict=verdict(previous.get("decision")),
        newly_failing=failing,
        newly_passing=passing,
        metrics=tuple(moved),
    )

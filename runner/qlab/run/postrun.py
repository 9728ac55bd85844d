"""Post-run evaluation: what a finished run's cases did, beyond pass or fail.

- **Trajectory** (per case, ``trajectory``): the tool calls a case made (its execute stage's requests, else its
  plan's tools) against ``expected_plan_tools``: exact match, order kept, missed, unexpected or repeated calls.
  ``score`` is the longest common subsequence over the longer list (1 = exact); ``sub_question_coverage`` the
  share of expected tools called at all.
- **Evidence bundle** (run-level, ``postrun.evidence``): the claims and evidence items of every response that
  carried them (``qlab.execute.claims``), added up.
- **The case's own view** (per case): ``duration_ms`` (its stage latencies added up) and ``actual_output``, a
  bounded summary of its stage objects (already scrubbed).

Everything here reads artifact-level data only, so ``qlab merge`` recomputes the run-level section exactly as
one run would."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

EVALUATED = frozenset({"passed", "failed", "error"})
MAX_LISTED = 20  # plan tools, sources: enough to read, bounded for a large run
EXCERPT_CHARS = 500


# --------------------------------------------------------------------------------------------- trajectory


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (plans are short: the quadratic table is fine)."""
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, start=1):
            keep = row[j]
            row[j] = diagonal + 1 if x == y else max(row[j], row[j - 1])
            diagonal = keep
    return row[-1]


def calls_made(case: Mapping[str, Any]) -> tuple[list[str], str] | None:
    """The case's tool calls in order and where they come from (``execute``: requests sent; ``plan``), or
    None when it reached neither."""
    execute = case.get("execute")
    steps = execute.get("steps") if isinstance(execute, Mapping) else None
    if isinstance(steps, list) and steps:
        return [str(s.get("tool")) for s in steps if isinstance(s, Mapping) and s.get("tool")], "execute"
    plan = case.get("plan")
    if isinstance(plan, Mapping) and isinstance(plan.get("tools"), list):
        return [str(t) for t in plan["tools"]], "plan"
    return None


def trajectory(expected: Sequence[str], case: Mapping[str, Any]) -> dict[str, Any]:
    """The trajectory of one evaluated case against ``expected`` (see the module docstring). A case that failed
    before it planned called nothing: every expected tool is missing."""
    made = calls_made(case)
    actual, source = made if made is not None else ([], "plan")
    want = list(expected)
    have, need = Counter(actual), Counter(want)
    called = [t for t in want if t in have]
    in_expected = [t for t in actual if t in need]
    collapsed = [t for i, t in enumerate(in_expected) if i == 0 or in_expected[i - 1] != t]
    longest = max(len(actual), len(want))
    distinct = list(dict.fromkeys(want))
    return {
        "expected": want,
        "actual": actual,
        "source": source,
        "exact": actual == want,
        "in_order": collapsed == [t for i, t in enumerate(called) if i == 0 or called[i - 1] != t],
        "missing": [t for t in distinct if t not in have],
        "extra": list(dict.fromkeys(t for t in actual if t not in need)),
        "repeated": list(dict.fromkeys(t for t in actual if have[t] > max(1, need[t]))),
        "score": 1.0 if longest == 0 else round(_lcs(actual, want) / longest, 6),
        "sub_question_coverage": round(sum(1 for t in distinct if t in have) / len(distinct), 6)
        if distinct
        else 1.0,
    }


def annotate(cases: Sequence[dict[str, Any]], expected: Mapping[str, Sequence[str]]) -> None:
    """Give every evaluated case whose project case expects tools its ``trajectory`` (in place). A search case
    never plans: its ``expected_plan_tools`` are not checked (``qlab validate`` warns), and score no coverage."""
    if not expected:
        return
    for case in cases:
        tools = expected.get(str(case.get("case_id")))
        if tools and case.get("status") in EVALUATED and case.get("mode") != "search":
            case["trajectory"] = trajectory(tools, case)
        else:
            case.pop("trajectory", None)


# --------------------------------------------------------------------------------------------- the case's view


def duration_ms(case: Mapping[str, Any]) -> float:
    """The case's stage latencies added up."""
    latency = case.get("latency_ms")
    if not isinstance(latency, Mapping):
        return 0.0
    if len(latency) == 1:  # most cases have one stage: its rounded latency is the duration, the same float
        (only,) = latency.values()
        if type(only) is float and round(only, 3) == only:
            return only
    return round(sum(float(v) for v in latency.values() if isinstance(v, (int, float))), 3)


def actual_output(case: Mapping[str, Any]) -> dict[str, Any]:
    """A bounded summary of what the case produced, stage by stage (see the module docstring)."""
    out: dict[str, Any] = {}
    search = case.get("search")
    if isinstance(search, Mapping):
        rank = search.get("hit_rank")
        out["hit_rank"] = rank
        rows = search.get("rows")
        out["top_1"] = rows[0].tool_id if rows else None
    selector = case.get("target_selector")
    if isinstance(selector, Mapping):
        out["selected_target"] = selector.get("selected_target")
    plan = case.get("plan")
    if isinstance(plan, Mapping):
        out["plan_status"] = plan.get("status")
        out["plan_tools"] = list(plan.get("tools") or ())[:MAX_LISTED]
    execute = case.get("execute")
    if isinstance(execute, Mapping):
        for key in ("http_status", "response_bytes", "content_type"):
            if key in execute:
                out[key] = execute[key]
        excerpt = execute.get("response_excerpt")
        if isinstance(excerpt, str):
            out["response_excerpt"] = excerpt[:EXCERPT_CHARS]
        claims = execute.get("claims")
        if isinstance(claims, Mapping) and "claims" in claims:
            out["claims"] = claims.get("claims")
            out["evidence_items"] = claims.get("evidence_items")
    return out


# --------------------------------------------------------------------------------------------- the run


def _trajectories(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    found = [
        c["trajectory"]
        for c in cases
        if isinstance(c.get("trajectory"), Mapping) and c.get("status") in EVALUATED
    ]
    if not found:
        return None
    expected = sum(len(dict.fromkeys(t["expected"])) for t in found)
    missing = sum(len(t["missing"]) for t in found)
    return {
        "cases": len(found),
        "exact": sum(1 for t in found if t["exact"]),
        "in_order": sum(1 for t in found if t["in_order"]),
        "with_missing": sum(1 for t in found if t["missing"]),
        "with_extra": sum(1 for t in found if t["extra"]),
        "with_repeated": sum(1 for t in found if t["repeated"]),
        "score": round(sum(float(t["score"]) for t in found) / len(found), 6),
        "expected_tools": expected,
        "called_tools": expected - missing,
        "sub_question_coverage": round((expected - missing) / expected, 6) if expected else None,
    }


def claims_records(cases: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The claims records of the evaluated cases whose response could be read."""
    out = []
    for case in cases:
        execute = case.get("execute")
        record = execute.get("claims") if isinstance(execute, Mapping) else None
        if case.get("status") in EVALUATED and isinstance(record, Mapping) and "claims" in record:
            out.append(record)
    return out


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 6)


def evidence_bundle(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The claims and evidence items of the whole run, added up; None when no response carried any."""
    records = claims_records(cases)
    if not records:
        return None

    def total(key: str) -> int:
        return sum(int(r.get(key) or 0) for r in records)

    needing = sum(int(r.get("needing_citation", r.get("claims")) or 0) for r in records)
    sources = sorted({str(s) for r in records for s in r.get("sources") or ()})
    return {
        "cases": len(records),
        "claims": total("claims"),
        "cited": total("cited"),
        "citation_coverage": _ratio(total("cited"), needing),
        "evidence_items": total("evidence_items"),
        "usable_evidence": total("usable_evidence"),
        "evidence_quality": _ratio(total("usable_evidence"), total("evidence_items")),
        "citations": total("citations"),
        "valid_citations": total("valid_citations"),
        "unhandled_conflicts": total("unhandled_conflicts"),
        "sources": len(sources),
    }


def section(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The artifact's ``postrun`` section."""
    evaluated = sum(1 for c in cases if c.get("status") in EVALUATED)
    return {
        "trajectory": _trajectories(cases),
        "evidence": evidence_bundle(cases),
        "evaluated_share": _ratio(evaluated, len(cases)),
    }

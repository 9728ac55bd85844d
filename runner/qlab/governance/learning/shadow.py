"""Shadow rank: rerun the affected search cases with suggested aliases applied in memory, and report the change.

The collection is never modified: the shadow engine is built from a copy whose Tools are
``dataclasses.replace(tool, aliases=...)``. Both sides run through the same ``engine_factory`` so the
comparison is engine against itself, not against what the original run happened to record.

A case is affected by an alias when its expected tool receives the alias, or when its query shares a term with
the alias (an alias can pull another tool above the expected one). Metrics over the affected cases:
hit@k, top-1 and MRR, before and after, and their delta; cases whose rank improved or got worse are listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Collection
from qlab.engine.base import Engine
from qlab.engine.text import Analyzer

METRICS: tuple[str, ...] = ("hit_at_k", "top_1", "mrr")


@dataclass(frozen=True, slots=True)
class ShadowCase:
    case_id: str
    query: str
    expected_target: str | None
    k: int


def apply_aliases(collection: Collection, additions: Mapping[str, Sequence[str]]) -> Collection:
    """A copy of ``collection`` whose tools carry the extra aliases (in memory; the original is untouched)."""
    tools = tuple(
        dataclasses.replace(t, aliases=tuple(dict.fromkeys((*t.aliases, *additions[t.id]))))
        if t.id in additions
        else t
        for t in collection.tools
    )
    return dataclasses.replace(collection, tools=tools, digest=f"shadow-of:{collection.digest}")


def shadow_rank(
    suggestions: Sequence[Mapping[str, Any]],
    *,
    collection: Collection,
    engine_factory: Callable[[Collection], Engine],
    cases: Sequence[ShadowCase],
) -> dict[str, Any]:
    """``{cases, suggestions, before, after, delta, improved, regressed, rows, per_suggestion}``.

    ``suggestions`` are alias suggestions (``tool_id``, ``aliases``); ``cases`` the search cases that can be
    rerun (query + expected target). With nothing to apply or nothing affected, ``cases`` is 0 and the metric
    maps are empty.
    """
    analyzer = Analyzer()
    known = collection.by_id()
    usable = [s for s in suggestions if s.get("tool_id") in known and s.get("aliases")]
    empty: dict[str, Any] = {
        "cases": 0,
        "suggestions": len(usable),
        "before": {},
        "after": {},
        "delta": {},
        "improved": [],
        "regressed": [],
        "rows": [],
        "per_suggestion": {},
    }
    affected_by = {str(s["id"]): _affected(s, cases, analyzer) for s in usable}
    union = [c for c in cases if any(c.case_id in ids for ids in affected_by.values())]
    if not union:
        return empty
    before = _ranks(engine_factory(collection), union)
    after = _ranks(engine_factory(apply_aliases(collection, _additions(usable))), union)
    out = _compare(union, before, after)
    out["suggestions"] = len(usable)
    out["rows"] = [
        {"case_id": c.case_id, "query": c.query, "expected_target": c.expected_target,
         "before_rank": before[c.case_id], "after_rank": after[c.case_id]}
        for c in union
    ]  # fmt: skip
    per: dict[str, Any] = {}
    for suggestion in usable:
        ids = affected_by[str(suggestion["id"])]
        mine = [c for c in union if c.case_id in ids]
        alone = _ranks(engine_factory(apply_aliases(collection, _additions([suggestion]))), mine)
        per[str(suggestion["id"])] = _compare(mine, {c.case_id: before[c.case_id] for c in mine}, alone)
    out["per_suggestion"] = per
    return out


def _additions(suggestions: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for s in suggestions:
        out.setdefault(str(s["tool_id"]), []).extend(str(a) for a in s["aliases"])
    return out


def _affected(suggestion: Mapping[str, Any], cases: Sequence[ShadowCase], analyzer: Analyzer) -> set[str]:
    alias_terms = {t for alias in suggestion["aliases"] for t in analyzer.terms(str(alias))}
    tool_id = suggestion["tool_id"]
    return {
        c.case_id
        for c in cases
        if c.expected_target == tool_id or alias_terms.intersection(analyzer.terms(c.query))
    }


def _ranks(engine: Engine, cases: Sequence[ShadowCase]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for case in cases:
        result = engine.search(case.query, k=case.k)
        out[case.case_id] = result.rank_of(case.expected_target) if case.expected_target else None
    return out


def _metrics(ranks: Mapping[str, int | None]) -> dict[str, float]:
    n = len(ranks)
    values = list(ranks.values())
    return {
        "hit_at_k": round(sum(1 for r in values if r is not None) / n, 6),
        "top_1": round(sum(1 for r in values if r == 1) / n, 6),
        "mrr": round(sum(1.0 / r for r in values if r) / n, 6),
    }


def _compare(
    cases: Sequence[ShadowCase], before: Mapping[str, int | None], after: Mapping[str, int | None]
) -> dict[str, Any]:
    b, a = _metrics(before), _metrics(after)
    improved, regressed = [], []
    for case in cases:
        old, new = before[case.case_id], after[case.case_id]
        # a miss is worse than any rank
        old_key = old if old is not None else 10**9
        new_key = new if new is not None else 10**9
        if new_key < old_key:
            improved.append(case.case_id)
        elif new_key > old_key:
            regressed.append(case.case_id)
    return {
        "cases": len(cases),
        "before": b,
        "after": a,
        "delta": {m: round(a[m] - b[m], 6) for m in METRICS},
        "improved": improved,
        "regressed": regressed,
    }

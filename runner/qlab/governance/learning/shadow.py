"""Shadow rank: rerun the affected search cases with suggested aliases applied in memory, and report the change.

The collection is never modified: the shadow engine is built from a copy whose Tools carry the aliases
(``apply_aliases``). Both sides run through the same ``engine_factory``, so the comparison is the engine against
itself, not against what the original run happened to record.

A case is affected by an alias when its expected tool receives the alias, or when its query shares a term with
the alias (an alias can pull another tool above the expected one). Metrics over the affected cases: hit@k, top-1
and MRR, before, after and their delta; cases whose rank improved or got worse are listed.

All the suggestions together cost two engines; each suggestion measured alone costs one more, so at most
``ALONE_LIMIT`` are measured alone, rerunning at most ``ALONE_CASES`` cases between them (``alone`` in the
result says how many); the combined measure covers the others."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Collection
from qlab.engine.base import Engine
from qlab.engine.text import Analyzer

METRICS: tuple[str, ...] = ("hit_at_k", "top_1", "mrr")
ALONE_LIMIT = 50  # suggestions shadow-ranked alone, each on an engine of its own (see the module docstring)
ALONE_CASES = 10_000  # case reruns those measures make between them


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
    alone_limit: int = ALONE_LIMIT,
    alone_cases: int = ALONE_CASES,
) -> dict[str, Any]:
    """``{cases, suggestions, before, after, delta, improved, regressed, rows, alone, per_suggestion}``.

    ``suggestions`` are alias suggestions (``tool_id``, ``aliases``); ``cases`` the search cases that can be
    rerun (query + expected target). With nothing to apply or nothing affected, ``cases`` is 0 and the metric
    maps are empty. ``alone``: ``{measured, of}``, the suggestions in ``per_suggestion`` (at most
    ``alone_limit`` of them rerunning at most ``alone_cases`` cases, see the module docstring) out of those that
    affect a case.
    """
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
        "alone": {"measured": 0, "of": 0},
        "per_suggestion": {},
    }
    if not usable:  # nothing to apply: no case to read (a 100,000-case run with no alias suggestion)
        return empty
    affects = Affects(cases, Analyzer(), usable)
    touched = affects.union(usable)
    union = [c for c in cases if c.case_id in touched]
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
    measurable = [(s, bound) for s in usable if (bound := affects.bound(s))]
    per: dict[str, Any] = {}
    budget = alone_cases
    for suggestion, bound in measurable:
        if len(per) >= alone_limit:
            break
        if bound > budget:
            continue
        budget -= bound
        ids = affects.ids(suggestion)
        mine = [c for c in union if c.case_id in ids]
        alone = _ranks(engine_factory(apply_aliases(collection, _additions([suggestion]))), mine)
        per[str(suggestion["id"])] = _compare(mine, {c.case_id: before[c.case_id] for c in mine}, alone)
    out["alone"] = {"measured": len(per), "of": len(measurable)}
    out["per_suggestion"] = per
    return out


def _additions(suggestions: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for s in suggestions:
        out.setdefault(str(s["tool_id"]), []).extend(str(a) for a in s["aliases"])
    return out


class Affects:
    """Which cases a suggestion affects: those expecting its tool, and those whose query has a term of one of its
    aliases. Each query is read once (the cases indexed by term and by expected tool); a suggestion's set is made
    only when asked for, never all of them at once (with one suggestion per failing case and a common alias
    term, that is cases x suggestions ids)."""

    def __init__(
        self,
        cases: Sequence[ShadowCase],
        analyzer: Analyzer,
        suggestions: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """``suggestions``: the only ones that will be asked about; then only their tools and their aliases'
        terms are indexed (a large run's cases are read once, but not every word of every query is kept)."""
        self.analyzer = analyzer
        self.by_term: dict[str, set[str]] = {}
        self.by_target: dict[str | None, set[str]] = {}
        terms: set[str] | None = None
        targets: set[Any] | None = None
        if suggestions is not None:
            terms = {t for s in suggestions for alias in s["aliases"] for t in analyzer.terms(str(alias))}
            targets = {s["tool_id"] for s in suggestions}
        for case in cases:
            if targets is None or case.expected_target in targets:
                self.by_target.setdefault(case.expected_target, set()).add(case.case_id)
            for term in set(analyzer.terms(case.query)):
                if terms is None or term in terms:
                    self.by_term.setdefault(term, set()).add(case.case_id)

    def _parts(self, suggestion: Mapping[str, Any]) -> list[set[str]]:
        terms = {t for alias in suggestion["aliases"] for t in self.analyzer.terms(str(alias))}
        found = [self.by_term[t] for t in sorted(terms) if t in self.by_term]
        target = self.by_target.get(suggestion["tool_id"])
        return [target, *found] if target else found

    def ids(self, suggestion: Mapping[str, Any]) -> set[str]:
        """The ids of the cases ``suggestion`` affects."""
        return set().union(*self._parts(suggestion))

    def bound(self, suggestion: Mapping[str, Any]) -> int:
        """At least the number of cases ``suggestion`` affects, at no more cost than its terms: the sizes of its
        parts added up (0 exactly when it affects none)."""
        return sum(len(part) for part in self._parts(suggestion))

    def union(self, suggestions: Sequence[Mapping[str, Any]]) -> set[str]:
        """The ids of the cases any of ``suggestions`` affects."""
        out: set[str] = set()
        for part in {id(p): p for s in suggestions for p in self._parts(s)}.values():
            out |= part
        return out


def _ranks(engine: Engine, cases: Sequence[ShadowCase]) -> dict[str, int | None]:
    """Each case's rank of its expected tool (the engine's optional ``rank_of`` makes no evidence rows)."""
    rank_of = getattr(engine, "rank_of", None)
    out: dict[str, int | None] = {}
    for case in cases:
        target = case.expected_target
        if not target:
            out[case.case_id] = None
        elif callable(rank_of):
            out[case.case_id] = rank_of(case.query, k=case.k, target=target)
        else:
            out[case.case_id] = engine.search(case.query, k=case.k).rank_of(target)
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

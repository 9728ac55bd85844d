"""Shadow rank: which cases an alias affects, and how many suggestions are measured alone."""

from __future__ import annotations

import random
from typing import Any

from governance.collections import IndexEngine, demo_collection
from qlab.collection.model import Collection
from qlab.engine.text import Analyzer
from qlab.governance.learning.shadow import Affects, ShadowCase, shadow_rank

WORDS = ["parcel", "delivery", "locker", "member", "order", "detail", "list", "where", "my", "status"]


def _cases(rng: random.Random, tools: list[str], n: int) -> list[ShadowCase]:
    return [ShadowCase(f"c-{i}", " ".join(rng.sample(WORDS, 3)), rng.choice(tools), 3) for i in range(n)]


def _twelve_suggestions(
    *, seed: int, n_cases: int
) -> tuple[Collection, list[ShadowCase], list[dict[str, Any]]]:
    """The demo collection, random cases over it, and twelve one-word alias suggestions, one per tool in turn."""
    collection = demo_collection()
    tools = [t.id for t in collection.tools]
    cases = _cases(random.Random(seed), tools, n_cases)
    suggestions: list[dict[str, Any]] = [
        {"id": f"s-{i:02d}", "tool_id": tools[i % len(tools)], "aliases": [WORDS[i % len(WORDS)]]}
        for i in range(12)
    ]
    return collection, cases, suggestions


def test_the_affected_cases_are_those_expecting_the_tool_or_sharing_an_alias_term() -> None:
    """Rule (the definition, checked against a direct reading of it on random cases): a case is affected by an
    alias suggestion when it expects the suggestion's tool or its query shares a term with one of the aliases."""
    rng = random.Random(7)
    tools = [t.id for t in demo_collection().tools]
    cases = _cases(rng, tools, 200)
    suggestions = [
        {
            "id": f"s-{i}",
            "tool_id": rng.choice(tools),
            "aliases": [" ".join(rng.sample(WORDS, 2)), "tracking"],
        }
        for i in range(30)
    ]
    analyzer = Analyzer()
    affects = Affects(cases, analyzer)
    every: set[str] = set()
    for s in suggestions:
        terms = {t for alias in s["aliases"] for t in analyzer.terms(alias)}
        expected = {
            c.case_id
            for c in cases
            if c.expected_target == s["tool_id"] or terms & set(analyzer.terms(c.query))
        }
        assert affects.ids(s) == expected
        assert affects.bound(s) >= len(expected) and (affects.bound(s) == 0) == (not expected)
        every |= expected
    assert affects.union(suggestions) == every
    # told which suggestions it will be asked about, it indexes only their tools and alias terms: same answers
    asked = suggestions[:2]
    only = Affects(cases, analyzer, asked)
    for s in asked:
        assert only.ids(s) == affects.ids(s) and only.bound(s) == affects.bound(s)
    assert only.union(asked) == affects.union(asked)
    alias_terms = {t for s in asked for alias in s["aliases"] for t in analyzer.terms(alias)}
    assert set(only.by_term) == alias_terms & set(affects.by_term) and len(only.by_term) < len(
        affects.by_term
    )
    assert set(only.by_target) == {s["tool_id"] for s in asked} & set(affects.by_target)


def test_at_most_the_limit_of_suggestions_are_measured_alone_in_the_order_they_were_made() -> None:
    """Rule: each suggestion measured alone costs an engine; past the limit the combined measure still covers
    every suggestion, and ``alone`` says how many were measured alone."""
    collection, cases, suggestions = _twelve_suggestions(seed=3, n_cases=60)
    built: list[Collection] = []

    def factory(c: Collection) -> IndexEngine:
        built.append(c)
        return IndexEngine(c)

    everything = shadow_rank(suggestions, collection=collection, engine_factory=factory, cases=cases)
    assert everything["alone"] == {"measured": 12, "of": 12} and len(built) == 2 + 12
    built.clear()
    some = shadow_rank(suggestions, collection=collection, engine_factory=factory, cases=cases, alone_limit=4)
    assert len(built) == 2 + 4
    assert some["alone"] == {"measured": 4, "of": 12}
    affects = Affects(cases, Analyzer())
    ranked = [str(x["id"]) for x in suggestions if affects.bound(x)]
    assert list(some["per_suggestion"]) == ranked[:4]
    for name in ranked[:4]:  # measured alone exactly as without the limit
        assert some["per_suggestion"][name] == everything["per_suggestion"][name]
    combined = ("cases", "before", "after", "delta", "improved", "regressed", "rows")
    assert {k: some[k] for k in combined} == {k: everything[k] for k in combined}


def test_the_reruns_of_the_alone_measures_are_bounded_and_a_suggestion_that_does_not_fit_is_passed_over() -> (
    None
):
    """Rule: the alone measures rerun at most ``alone_cases`` cases between them (each counted by its bound); a
    suggestion that does not fit what is left is passed over for the next one that does."""
    collection, cases, suggestions = _twelve_suggestions(seed=5, n_cases=80)
    affects = Affects(cases, Analyzer())
    bounds = {str(x["id"]): affects.bound(x) for x in suggestions}
    ranked = [name for name in bounds if bounds[name]]
    smallest = min(ranked, key=lambda n: bounds[n])
    budget = bounds[ranked[0]] + bounds[smallest]  # the first, then only what fits of the rest
    out = shadow_rank(
        suggestions, collection=collection, engine_factory=IndexEngine, cases=cases, alone_cases=budget
    )
    expected, left = [], budget
    for name in ranked:
        if bounds[name] <= left:
            expected.append(name)
            left -= bounds[name]
    assert list(out["per_suggestion"]) == expected and ranked[0] in expected and len(expected) > 1
    assert sum(bounds[n] for n in out["per_suggestion"]) <= budget
    assert out["alone"] == {"measured": len(expected), "of": 12}


def test_without_a_usable_suggestion_no_case_is_read() -> None:
    """Rule: with nothing to apply, shadow rank reads no case (a large run with no alias suggestion would index
    every query's words for nothing)."""

    class Unread(list[ShadowCase]):
        def __iter__(self) -> Any:
            raise AssertionError("the cases were read")

    collection, _cases, suggestions = _twelve_suggestions(seed=3, n_cases=5)
    unknown = [{**suggestions[0], "tool_id": "noSuchTool"}]
    for given in ([], unknown):
        out = shadow_rank(given, collection=collection, engine_factory=IndexEngine, cases=Unread())
        assert out["cases"] == 0 and out["suggestions"] == 0 and out["per_suggestion"] == {}

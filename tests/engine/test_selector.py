"""The target selector's guardrails: every reason code, each strong-evidence rule, the ambiguity margin."""

from __future__ import annotations

import pytest

from qlab.engine import selector
from qlab.engine.selector import AMBIGUITY_MARGIN, OVERRIDE_MARGIN, Evidence, decide, named_by_query
from qlab.engine.types import (
    AMBIGUOUS_CANDIDATES,
    LLM_TARGET_KEPT,
    LLM_TARGET_NOT_IN_TOP_K,
    LLM_TARGET_OVERRIDDEN,
    NO_CANDIDATES,
    NO_LLM_TARGET,
    SELECTED_BY_STRONG_EVIDENCE,
    SELECTED_TOP_RANK,
    SearchResult,
    SearchRow,
)

from .helpers import collection, tool


def ev(
    tool_id: str, rank: int, score: float, *, exact: bool = False, fit: int = 0, mutation: int = 0
) -> Evidence:
    return Evidence(tool_id, rank, score, exact, fit, mutation)


def test_no_llm_target_selects_the_top_rank() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 5.0)], llm_target=None, n_entities=0)
    assert (s.selected_target, s.overrode_llm, s.reason_codes) == (
        "a",
        False,
        (NO_LLM_TARGET, SELECTED_TOP_RANK),
    )
    assert not s.ambiguous


def test_llm_target_kept_when_no_challenger_has_strong_evidence() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 9.0)], llm_target="b", n_entities=0)
    assert (s.selected_target, s.overrode_llm, s.reason_codes) == ("b", False, (LLM_TARGET_KEPT,))


def test_llm_target_overridden_by_a_score_margin() -> None:
    lead = 1.0 + OVERRIDE_MARGIN
    s = decide([ev("detail", 1, 10.0 * lead), ev("list", 2, 10.0)], llm_target="list", n_entities=0)
    assert s.selected_target == "detail"
    assert s.overrode_llm is True
    assert s.reason_codes == (LLM_TARGET_OVERRIDDEN, SELECTED_BY_STRONG_EVIDENCE)
    # just under the margin: kept
    kept = decide([ev("detail", 1, 10.0 * lead - 0.01), ev("list", 2, 10.0)], llm_target="list", n_entities=0)
    assert kept.reason_codes == (LLM_TARGET_KEPT,)


def test_a_score_margin_does_not_override_a_better_entity_fit() -> None:
    s = decide([ev("a", 1, 30.0, fit=0), ev("b", 2, 10.0, fit=1)], llm_target="b", n_entities=1)
    assert s.reason_codes == (LLM_TARGET_KEPT,)


def test_llm_target_overridden_by_entity_fit() -> None:
    s = decide([ev("list", 1, 10.0, fit=1), ev("detail", 2, 6.0, fit=2)], llm_target="list", n_entities=2)
    assert s.selected_target == "detail"
    assert s.reason_codes == (LLM_TARGET_OVERRIDDEN, SELECTED_BY_STRONG_EVIDENCE)
    # a fit below half the LLM target's score is not strong enough
    weak = decide([ev("list", 1, 10.0, fit=1), ev("detail", 2, 4.0, fit=2)], llm_target="list", n_entities=2)
    assert weak.reason_codes == (LLM_TARGET_KEPT,)


def test_llm_target_overridden_by_an_exact_name() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 2.0, exact=True)], llm_target="a", n_entities=0)
    assert (s.selected_target, s.reason_codes) == ("b", (LLM_TARGET_OVERRIDDEN, SELECTED_BY_STRONG_EVIDENCE))
    # an LLM target named by the query is never overridden on score
    named = decide([ev("a", 1, 50.0), ev("b", 2, 2.0, exact=True)], llm_target="b", n_entities=0)
    assert named.reason_codes == (LLM_TARGET_KEPT,)


def test_without_llm_target_a_named_tool_beats_the_top_rank() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 3.0, exact=True)], llm_target=None, n_entities=0)
    assert (s.selected_target, s.reason_codes) == ("b", (NO_LLM_TARGET, SELECTED_BY_STRONG_EVIDENCE))


def test_llm_target_not_in_top_k() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 4.0)], llm_target="elsewhere", n_entities=0)
    assert s.selected_target == "a"
    assert s.overrode_llm is True
    assert s.reason_codes == (LLM_TARGET_NOT_IN_TOP_K, SELECTED_TOP_RANK)


def test_no_candidates() -> None:
    assert decide([], llm_target=None, n_entities=0).reason_codes == (NO_LLM_TARGET, NO_CANDIDATES)
    s = decide([], llm_target="x", n_entities=0)
    assert (s.selected_target, s.overrode_llm, s.reason_codes) == (
        None,
        True,
        (LLM_TARGET_NOT_IN_TOP_K, NO_CANDIDATES),
    )


def test_ambiguous_candidates_within_the_margin() -> None:
    near = 10.0 * (1 - AMBIGUITY_MARGIN) + 0.001
    s = decide([ev("a", 1, 10.0), ev("b", 2, near), ev("c", 3, 5.0)], llm_target=None, n_entities=0)
    assert s.reason_codes == (NO_LLM_TARGET, SELECTED_TOP_RANK, AMBIGUOUS_CANDIDATES)
    assert (s.ambiguous, s.selected_target, s.candidates) == (True, "a", ("a", "b"))
    apart = decide(
        [ev("a", 1, 10.0), ev("b", 2, 10.0 * (1 - AMBIGUITY_MARGIN) - 0.01)], llm_target=None, n_entities=0
    )
    assert not apart.ambiguous


def test_different_evidence_is_not_a_tie() -> None:
    s = decide([ev("a", 1, 10.0, fit=1), ev("b", 2, 10.0, fit=0)], llm_target=None, n_entities=1)
    assert not s.ambiguous and s.selected_target == "a"


def test_a_kept_llm_target_breaks_the_tie() -> None:
    s = decide([ev("a", 1, 10.0), ev("b", 2, 10.0)], llm_target="b", n_entities=0)
    assert (s.selected_target, s.ambiguous, s.reason_codes) == ("b", False, (LLM_TARGET_KEPT,))


def test_a_tie_resolves_to_the_tool_without_side_effects() -> None:
    s = decide(
        [ev("cancelOrder", 1, 10.0, mutation=2), ev("getOrder", 2, 9.9)], llm_target=None, n_entities=1
    )
    assert s.selected_target == "getOrder"
    assert s.reason_codes == (NO_LLM_TARGET, SELECTED_BY_STRONG_EVIDENCE, AMBIGUOUS_CANDIDATES)
    assert s.candidates == ("getOrder", "cancelOrder")
    # an LLM target that would mutate in a tie is overridden too
    s = decide(
        [ev("cancelOrder", 1, 10.0, mutation=2), ev("getOrder", 2, 9.9)],
        llm_target="cancelOrder",
        n_entities=0,
    )
    assert (s.selected_target, s.overrode_llm) == ("getOrder", True)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("call getMemberDeliveryDetail for M-1", True),
        ("get member delivery detail", True),  # the id's words, in order
        ("the delivery detail of a member", False),
        ("where is my parcel now", True),  # an alias
        ("parcel", False),
    ],
)
def test_named_by_query(query: str, named: bool) -> None:
    detail = tool("getMemberDeliveryDetail", aliases=("where is my parcel",))
    assert named_by_query(query, detail) is named


def test_select_gathers_evidence_from_the_collection() -> None:
    """Seed 000's example: the LLM proposed the list, the detail has the strong evidence."""
    rows = (
        SearchRow("getMemberDeliveryDetail", 1, 11.9),
        SearchRow("getMemberDeliveryList", 2, 5.0),
    )
    s = selector.select(
        "Find the member delivery detail",
        SearchResult(rows),
        collection=collection(),
        entities={"memberNo": "M-1001"},
        llm_target="getMemberDeliveryList",
    )
    assert s.selected_target == "getMemberDeliveryDetail"
    assert s.overrode_llm is True
    assert s.reason_codes == (LLM_TARGET_OVERRIDDEN, SELECTED_BY_STRONG_EVIDENCE)
    evidence = selector.gather_evidence(
        "q", SearchResult(rows), collection=collection(), entities={"memberNo": "M", "deliveryId": "D"}
    )
    assert [(e.tool_id, e.fit) for e in evidence] == [
        ("getMemberDeliveryDetail", 2),
        ("getMemberDeliveryList", 1),
    ]

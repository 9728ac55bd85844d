"""The built-in search: BM25F ranking, evidence rows, exact-word boost, fuzzy rescue, deterministic ties."""

from __future__ import annotations

import itertools
import math

import pytest

from qlab.engine.bm25f import DEFAULT_SETTINGS, FIELDS, FieldSpec, SearchSettings, field_texts
from qlab.engine.index import SearchIndex

from .helpers import TOOLS, param, tool


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(TOOLS)


def test_ranks_the_detail_first_with_a_score_breakdown(index: SearchIndex) -> None:
    result = index.search("Find the member delivery detail", k=3)
    assert [r.rank for r in result.rows] == [1, 2, 3]
    top = result.rows[0]
    assert top.tool_id == "getMemberDeliveryDetail"
    assert top.matched_terms == ("member", "delivery", "detail")
    assert set(top.field_scores) <= set(FIELDS)
    assert {"id", "summary", "path"} <= set(top.field_scores)
    assert math.isclose(sum(top.field_scores.values()), top.score, rel_tol=1e-9)
    assert result.query_terms == ("member", "delivery", "detail")  # "find" is in no tool: not a query term
    assert all(a.score >= b.score for a, b in itertools.pairwise(result.rows))


def test_every_field_contributes() -> None:
    """A term found only in one field scores through that field alone."""
    tools = (
        tool("a1", summary="zebra", path="/x"),
        tool("a2", description="yak", path="/x"),
        tool("a3", aliases=("walrus",), path="/x"),
        tool("a4", tags=("ocelot",), path="/x"),
        tool("a5", path="/llamas/{id}"),
        tool("okapiFinder", path="/x"),
        tool("a7", params=(param("gnuCount", required=False),), path="/x"),
    )
    index = SearchIndex(tools)
    for query, tool_id, field in [
        ("zebra", "a1", "summary"),
        ("yak", "a2", "description"),
        ("walrus", "a3", "aliases"),
        ("ocelot", "a4", "tags"),
        ("llamas", "a5", "path"),
        ("okapi", "okapiFinder", "id"),
        ("gnu", "a7", "params"),
    ]:
        row = index.search(query, k=1).rows[0]
        assert (row.tool_id, set(row.field_scores)) == (tool_id, {field}), query


def test_field_texts_cover_id_name_params_tags_family_aliases_and_path() -> None:
    t = tool(
        "listPets",
        name="List pets",
        summary="s",
        description="d",
        params=(),
        aliases=("animals",),
        tags=("pets",),
    )
    texts = field_texts(t)
    assert texts[FIELDS.index("id")] == ("listPets List pets",)
    assert texts[FIELDS.index("aliases")] == ("animals",)
    assert texts[FIELDS.index("tags")] == ("pets",)
    assert texts[FIELDS.index("path")] == ("GET /listPets",)


def test_exact_word_beats_another_form_of_the_same_stem() -> None:
    index = SearchIndex(
        (tool("getFollowed", summary="followed artists"), tool("follow", summary="follow artists"))
    )
    assert [r.tool_id for r in index.search("follow", k=2).rows] == ["follow", "getFollowed"]
    assert [r.tool_id for r in index.search("followed", k=2).rows] == ["getFollowed", "follow"]


def test_a_misspelt_word_is_rescued_and_reported(index: SearchIndex) -> None:
    result = index.search("trakcing evnets", k=2)
    assert result.rows[0].tool_id in {"trackDelivery", "getMemberDeliveryDetail"}
    corrections = {w: f for r in result.rows for w, f in r.corrections.items()}
    assert corrections == {"trakcing": "tracking", "evnets": "events"}
    assert "tracking" not in index.search("tracking events", k=1).rows[0].corrections


def test_rescued_words_count_less_than_typed_ones() -> None:
    index = SearchIndex((tool("a", summary="tracking"), tool("b", summary="parcels")))
    typed = index.search("tracking", k=1).rows[0].score
    rescued = index.search("trackinx", k=1).rows[0].score
    assert rescued == pytest.approx(
        typed / (1 + DEFAULT_SETTINGS.exact_weight) * DEFAULT_SETTINGS.correction_weight
    )


def test_ties_break_on_the_tool_id() -> None:
    twins = tuple(tool(name, summary="same words") for name in ("zeta", "alpha", "mid"))
    result = SearchIndex(twins).search("same words", k=3)
    assert [r.tool_id for r in result.rows] == ["alpha", "mid", "zeta"]
    assert len({r.score for r in result.rows}) == 1


def test_no_match_and_k_zero_give_no_rows(index: SearchIndex) -> None:
    assert index.search("the of and", k=5).rows == ()
    assert index.search("xylophone", k=5).rows == ()
    assert index.search("delivery", k=0).rows == ()
    assert len(index.search("delivery", k=2).rows) == 2


def test_idf_favours_rare_terms(index: SearchIndex) -> None:
    rows = index.search("detail delivery", k=6).rows
    detail = next(r for r in rows if r.tool_id == "getMemberDeliveryDetail")
    assert detail.rank == 1
    # every delivery tool matches "delivery"; only the detail matches the rarer "detail"
    assert sum(1 for r in rows if "delivery" in r.matched_terms) >= 4


def test_field_weights_change_the_ranking() -> None:
    tools = (tool("a", summary="parcel"), tool("b", description="parcel"))
    assert SearchIndex(tools).search("parcel", k=1).rows[0].tool_id == "a"
    fields = {**DEFAULT_SETTINGS.fields, "summary": FieldSpec(0.1, 0.5), "description": FieldSpec(5.0, 0.5)}
    flipped = SearchIndex(tools, settings=SearchSettings(fields=fields))
    assert flipped.search("parcel", k=1).rows[0].tool_id == "b"


def test_search_is_repeatable(index: SearchIndex) -> None:
    first = index.search("reschedule my delivery date", k=4)
    assert index.search("reschedule my delivery date", k=4) == first
    assert SearchIndex(tuple(reversed(TOOLS))).search("reschedule my delivery date", k=4) == first


def test_vocabulary_is_the_stems(index: SearchIndex) -> None:
    assert {"delivery", "member", "track"} <= index.vocabulary
    assert not any(term.startswith("=") for term in index.vocabulary)


def test_maxscore_pruning_returns_the_exhaustive_top_k() -> None:
    """Large postings take the MaxScore path; its Top-K must equal adding every posting."""
    import random

    rng = random.Random(4)
    vocabulary = ["member", "delivery", "order", "parcel", "carrier", "invoice", "refund", "address"]
    tools = tuple(
        tool(
            f"op{i:04d}", summary=" ".join([*rng.sample(vocabulary, 3), "number", f"item{i % 37}"]), path="/x"
        )
        for i in range(900)
    )
    index = SearchIndex(tools)
    for _ in range(60):
        query = " ".join(rng.sample([*vocabulary, "number", f"item{rng.randrange(37)}"], 4))
        words = index.words(query)
        assert sum(len(w.docs) for w in words) >= 512  # the pruned path
        totals: dict[int, float] = {}
        for word in words:
            for d, s in zip(word.docs, word.scores, strict=True):
                totals[d] = totals.get(d, 0.0) + s
        expected = sorted(totals, key=lambda d: (-totals[d], d))[:7]
        rows = index.search(query, k=7).rows
        assert [r.tool_id for r in rows] == [index.tools[d].id for d in expected], query
        for row, d in zip(rows, expected, strict=True):
            assert row.score == pytest.approx(totals[d], rel=1e-12)

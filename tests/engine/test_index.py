"""The built-in search: BM25F ranking, evidence rows, exact-word boost, fuzzy rescue, deterministic ties."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from qlab.collection.model import Parameter, Tool
from qlab.engine.bm25f import (
    DEFAULT_SETTINGS,
    FIELDS,
    FieldSpec,
    SearchSettings,
    field_strings,
    string_weight,
)
from qlab.engine.index import SearchIndex
from qlab.engine.types import SearchRow

from .helpers import TOOLS, param, tool

# the settings without the targets' re-ordering of the head, for the tests of what the words alone score
NO_TARGET = dataclasses.replace(DEFAULT_SETTINGS, target_weight=0.0)


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(TOOLS)


def test_ranks_the_detail_first_with_a_score_breakdown(index: SearchIndex) -> None:
    result = index.search("Find the member delivery detail", k=3)
    assert [r.rank for r in result.rows] == [1, 2, 3]
    top = result.rows[0]
    assert top.tool_id == "getMemberDeliveryDetail"
    assert top.matched_terms == ("member", "deliveri", "detail")
    assert set(top.field_scores) <= {*FIELDS, "intent", "scope", "synonym", "target"}
    assert {"id", "summary", "path"} <= set(top.field_scores)
    assert top.field_scores["intent"] > 0  # "find" asks to read: the GET operations get the method prior
    assert math.isclose(sum(top.field_scores.values()), top.score, rel_tol=1e-9)
    assert result.query_terms == ("member", "deliveri", "detail")  # "find" is in no tool: not a query term
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
    index = SearchIndex(tools, settings=NO_TARGET)
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


def field_texts(tool: Tool) -> tuple[tuple[str, ...], ...]:
    """The text of each of ``FIELDS`` for ``tool`` (what the index analyzes): its strings joined by spaces."""
    return tuple((" ".join(strings),) if strings else () for strings in field_strings(tool))


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
    assert sum(1 for r in rows if "deliveri" in r.matched_terms) >= 4


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
    assert {"deliveri", "member", "track"} <= index.vocabulary
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
        assert sum(len(w.by_doc) for w in words) >= 512  # the pruned path
        totals: dict[int, float] = {}
        for word in words:
            for d, s in word.by_doc.items():
                totals[d] = totals.get(d, 0.0) + s
        expected = sorted(totals, key=lambda d: (-totals[d], d))[:7]
        rows = index.search(query, k=7).rows
        assert [r.tool_id for r in rows] == [index.tools[d].id for d in expected], query
        for row, d in zip(rows, expected, strict=True):
            assert row.score == pytest.approx(totals[d], rel=1e-12)


def test_scores_equal_the_bm25f_formula_with_shared_parameter_lists() -> None:
    """Tools that share parameter lists (read once, as a group) and repeat strings score exactly as BM25F
    computed from each tool's field texts, each word of a shared field counted at its string's weight."""
    import random

    from qlab.collection.model import Parameter
    from qlab.engine.bm25f import SHARED_FIELDS, field_strings, string_weight
    from qlab.engine.text import Analyzer

    def param(name: str, description: str = "") -> Parameter:
        return Parameter(name, "query", False, {"type": "string"}, description=description)

    rng = random.Random(5)
    words = ["member", "delivery", "order", "parcel", "carrier", "invoice", "refund", "address", "number"]
    lists = [
        tuple(param(f"{rng.choice(words)}Id", description=" ".join(rng.sample(words, 3))) for _ in range(n))
        for n in (3, 4, 5, 3)
    ]
    lists.append((param("orderId", description="order"), param("orderId", description="order"), param("x")))
    tools = tuple(
        tool(
            f"op{i:03d}",
            summary=" ".join(rng.sample(words, 2)),
            params=rng.choice(lists),
            tags=tuple(rng.sample(words, rng.choice((1, 3)))),
        )
        for i in range(60)
    )
    settings = SearchSettings(fields=DEFAULT_SETTINGS.fields, exact_weight=0.0)
    index = SearchIndex(tools, settings=settings)
    analyzer = Analyzer()
    tf = [[analyzer.terms(" ".join(texts)) for texts in field_texts(t)] for t in index.tools]
    shared = [f for f, name in enumerate(FIELDS) if name in SHARED_FIELDS]
    places: dict[str, int] = {}
    for t in tools:
        for f in shared:
            for string in field_strings(t)[f]:
                places[string] = places.get(string, 0) + 1
    # per tool and field: term -> its occurrences, each counted at its string's weight in a shared field
    counts: list[list[dict[str, float]]] = []
    for t in index.tools:
        fields = []
        for f, strings in enumerate(field_strings(t)):
            found: dict[str, float] = {}
            for string in strings:
                w = string_weight(places[string], len(tools), 1.0) if f in shared else 1.0
                for term in analyzer.terms(string):
                    found[term] = found.get(term, 0.0) + w
            fields.append(found)
        counts.append(fields)
    assert any(w < 0.5 for w in [string_weight(k, len(tools), 1.0) for k in places.values()])
    avg = []
    for f in range(len(FIELDS)):
        present = [len(doc[f]) for doc in tf if doc[f]]
        avg.append(sum(present) / len(present) if present else 1.0)

    def score(term: str, d: int) -> float:
        doc = tf[d]
        df = sum(1 for other in tf if any(term in field for field in other))
        idf = math.log(1.0 + (len(tf) - df + 0.5) / (df + 0.5))
        t = 0.0
        for f, name in enumerate(FIELDS):
            spec = settings.fields[name]
            if doc[f]:
                t += (
                    spec.weight * counts[d][f].get(term, 0.0) / ((1 - spec.b) + spec.b * len(doc[f]) / avg[f])
                )
        return idf * t * (settings.k1 + 1) / (settings.k1 + t) if t else 0.0

    for query in ("order number", "refund invoice member", "carrier address delivery", "parcel"):
        terms = set(analyzer.terms(query))
        expected = {d: sum(score(term, d) for term in terms) for d in range(len(tf))}
        rows = index.search(query, k=8).rows
        assert rows
        for row in rows:
            d = next(i for i, t in enumerate(index.tools) if t.id == row.tool_id)
            assert row.score == pytest.approx(expected[d], rel=1e-12), (query, row.tool_id)
            assert sum(row.field_scores.values()) == pytest.approx(row.score, rel=1e-9)
        best = sorted(expected.values(), reverse=True)[: len(rows)]
        assert [row.score for row in rows] == pytest.approx(best, rel=1e-12)


def test_a_tie_at_the_k_th_place_keeps_the_lowest_ids() -> None:
    """Rule: the Top-K is ordered by score, then tool id — also when the tie straddles the k-th place, so more
    tied tools exist than places (the same query gives the same rows whatever order the tools were given in)."""
    names = ["kappa", "delta", "omega", "beta", "alpha", "gamma"]
    twins = [tool(name, summary="same words") for name in names]
    best = tool("zzz", summary="same words same words", description="same words")
    for order in (twins, list(reversed(twins)), [twins[2], twins[5], twins[0], twins[4], twins[1], twins[3]]):
        index = SearchIndex((*order, best))
        assert [r.tool_id for r in index.search("same words", k=1).rows] == ["zzz"]
        assert [r.tool_id for r in index.search("same words", k=3).rows] == ["zzz", "alpha", "beta"]
        assert [r.tool_id for r in index.search("same words", k=2).rows] == ["zzz", "alpha"]


def test_a_tie_at_the_k_th_place_on_the_pruned_path_keeps_the_lowest_ids() -> None:
    twins = tuple(tool(f"op{i:04d}", summary="shared parcel words", path="/x") for i in range(700, 0, -1))
    index = SearchIndex(twins)
    assert sum(len(w.by_doc) for w in index.words("shared parcel words")) >= 512  # the MaxScore path
    assert [r.tool_id for r in index.search("shared parcel words", k=3).rows] == [
        "op0001",
        "op0002",
        "op0003",
    ]


def test_ties_break_on_the_id_whatever_order_the_matches_are_found_in() -> None:
    """The tied tools sit far apart in a large collection (documents 5, 69 and 133 of 200: a set of them does not
    iterate in id order), so only an explicit tie-break on the id gives the lowest ids, at every k."""
    tools = tuple(
        tool(f"t{i:03d}", summary="same words" if i in (5, 69, 133) else f"other text {i}")
        for i in range(200)
    )
    index = SearchIndex(tools)
    assert [r.tool_id for r in index.search("same words", k=1).rows] == ["t005"]
    assert [r.tool_id for r in index.search("same words", k=2).rows] == ["t005", "t069"]
    assert [r.tool_id for r in index.search("same words", k=3).rows] == ["t005", "t069", "t133"]


def test_a_row_one_word_alone_matched_shows_its_rank_evidence_and_correction() -> None:
    """Rows matched by one word and no intent take the shared-evidence path: rank, split, terms and the
    correction are the row's own; asking again gives the same scores (the score buffer is left clean)."""
    tools = (
        tool("trackParcel", summary="Track a parcel parcel"),
        tool("getParcel", summary="A parcel"),
        *(tool(f"other{i}", summary=f"unrelated words {i}") for i in range(40)),
    )
    index = SearchIndex(tools)
    first = index.search("parcel", k=2).rows
    assert [(r.tool_id, r.rank, r.matched_terms, dict(r.corrections)) for r in first] == [
        ("trackParcel", 1, ("parcel",), {}),
        ("getParcel", 2, ("parcel",), {}),
    ]
    for row in first:
        assert sum(row.field_scores.values()) == pytest.approx(row.score, rel=1e-9) and row.score > 0
    assert index.search("parcel", k=2).rows == first
    fixed = index.search("parcle", k=1).rows[0]
    assert (fixed.tool_id, fixed.rank, fixed.matched_terms, dict(fixed.corrections)) == (
        "trackParcel", 1, ("parcel",), {"parcle": "parcel"}
    )  # fmt: skip


def test_the_ranking_before_its_rows() -> None:
    """``rank``: no places or no word give an empty ranking that still names the query's terms and content words;
    a query without an intent lifts nothing and adds no bonus; one with an intent adds intent_weight x ln(1 + N)."""
    tools = (tool("getParcel", summary="parcel"), tool("dropParcel", summary="parcel", method="DELETE"))
    index = SearchIndex(tools)
    assert index.rank("parcel", k=0) == ((), [], (), 0.0, ("parcel",), ("parcel",), (), {})
    assert index.rank("xylophone", k=3) == ((), [], (), 0.0, (), ("xylophone",), (), {})
    plain = index.rank("parcel", k=2)
    assert (plain.lifted, plain.bonus, plain.terms, plain.content) == ((), 0.0, ("parcel",), ("parcel",))
    lifted = index.rank("delete the parcel", k=2)
    assert lifted.bonus == pytest.approx(index.api_vocabulary.intent_weight * math.log(1 + 2), rel=1e-12)
    assert set(lifted.lifted) == {1} and lifted.top[0][0] == 1  # the DELETE tool, lifted to first


def test_maxscore_pruning_with_an_intent_or_a_deep_k_returns_the_exhaustive_top_k() -> None:
    """The MaxScore path also when the intent's prior lifts some tools (what the prior may still add bounds the
    pruning) and when k is so deep that nothing is pruned: the Top-K and scores of adding every posting."""
    import random

    rng = random.Random(11)
    vocabulary = ["member", "delivery", "order", "parcel", "carrier", "invoice", "refund", "address"]
    methods = ("GET", "POST", "DELETE", "PUT")
    tools = tuple(
        tool(f"op{i:04d}", summary=" ".join([*rng.sample(vocabulary, 3), "number"]), path="/x", method=methods[i % 4])
        for i in range(900)
    )  # fmt: skip
    index = SearchIndex(tools)
    bonus = index.api_vocabulary.intent_weight * math.log(1 + len(tools))
    for verb, k in (("delete", 5), ("show", 5), ("delete", 600), ("", 600)):
        for _ in range(4):
            query = " ".join([verb, *rng.sample(vocabulary, 2), "number"]).strip()
            reading = index.read(query)
            favoured = index.api_vocabulary.methods.get(reading.intent or "", ())
            totals: dict[int, float] = {}
            for word in index.words(query):
                for d, s in word.by_doc.items():
                    totals[d] = totals.get(d, 0.0) + s
            assert sum(1 for _ in totals) and sum(len(w.by_doc) for w in index.words(query)) >= 512
            for d in totals:
                totals[d] += bonus if index.tools[d].method in favoured else 0.0
            expected = sorted(totals, key=lambda d: (-totals[d], d))[:k]
            result = index.search(query, k=k)
            assert [r.tool_id for r in result.rows] == [index.tools[d].id for d in expected], query
            assert [r.score for r in result.rows] == pytest.approx([totals[d] for d in expected], rel=1e-12)
            assert result.query_terms == tuple(w.term for w in index.words(query))
            assert index.rank(query, k=k).content == reading.content


def test_a_word_scores_its_stem_plus_exact_weight_times_its_exact_form() -> None:
    """Rule: a query word counts its stem's posting, plus ``exact_weight`` times its exact form's when the
    collection writes the stem in several forms; only the stem, times 1 + exact_weight, when it writes this form
    alone; exact_weight 0 counts the stem alone."""
    from qlab.engine.bm25f import EXACT

    tools = (
        tool("listOrders", summary="orders"),
        tool("getOrder", summary="order"),
        tool("ship", summary="ship"),
    )
    index = SearchIndex(tools, settings=NO_TARGET)
    doc = {tool_id: d for d, tool_id in enumerate(index.ids)}
    model, weight = index._model, DEFAULT_SETTINGS.exact_weight
    stem, exact = model.posting("order") or {}, model.posting(EXACT + "order") or {}
    one, many = doc["getOrder"], doc["listOrders"]
    scores = {r.tool_id: r.score for r in index.search("order", k=2).rows}
    assert scores == pytest.approx(
        {"getOrder": stem[one] + weight * exact[one], "listOrders": stem[many]}, rel=1e-12
    )
    alone = index.search("ship", k=1).rows[0].score
    assert alone == pytest.approx((1 + weight) * (model.posting("ship") or {})[doc["ship"]], rel=1e-12)
    plain = SearchIndex(tools, settings=dataclasses.replace(NO_TARGET, exact_weight=0.0))
    plain_scores = {r.tool_id: r.score for r in plain.search("order", k=2).rows}
    assert plain_scores == pytest.approx({"getOrder": stem[one], "listOrders": stem[many]}, rel=1e-12)


def test_a_word_scores_through_a_synonym_where_that_beats_its_own_score() -> None:
    """Rule: where a query word's synonym scores ``synonym_weight`` times more than the word itself, the row counts
    that, shown as ``word~synonym`` with a ``synonym`` field; elsewhere the word's own score stands."""
    tools = (
        tool("petGone", summary="delete a pet", method="POST"),
        tool("removeToy", summary="remove a toy"),
    )
    index = SearchIndex(tools, settings=NO_TARGET)
    doc = {tool_id: d for d, tool_id in enumerate(index.ids)}
    weight = index.api_vocabulary.synonym_weight
    rows = index.search("remove", k=2).rows
    own = (1 + DEFAULT_SETTINGS.exact_weight) * (index._model.posting("remov") or {})[
        doc["removeToy"]
    ]  # sole form
    through = (index._model.posting("delet") or {})[doc["petGone"]] * weight
    assert [(r.tool_id, r.matched_terms) for r in rows] == [
        ("removeToy", ("remov",)),
        ("petGone", ("remov~delet",)),
    ]
    assert dict(rows[1].field_scores) == pytest.approx({"synonym": through}, rel=1e-12)
    assert [r.score for r in rows] == pytest.approx([own, through], rel=1e-12)


def test_explain_says_how_each_content_word_matches() -> None:
    """``qlab search --explain``: per content word, in query order, whether it matches as itself (and through which
    synonyms elsewhere), only through synonyms, through a correction, not at all, or is a stopword; the methods the
    intent favours."""
    from qlab.engine.index import WordReading

    tools = (
        tool("petGone", summary="delete a pet parcel", method="DELETE"),
        tool("getParcel", summary="parcel detail"),
        tool("removeToy", summary="remove a toy"),
    )
    explained = SearchIndex(tools).explain("please remove the parcle parcel xylophone detail 42")
    assert explained.methods == ("DELETE",) and explained.reading.values == ("42",)
    assert explained.words == (
        WordReading("please", "", "stopword"),
        WordReading("remove", "remov", "word", ("delet",)),
        WordReading("the", "", "stopword"),
        WordReading("parcle", "parcel", "correction", (), "parcel"),
        WordReading("parcel", "parcel", "word"),
        WordReading("xylophone", "xylophon", "unmatched"),
        WordReading("detail", "detail", "word"),
    )
    only = SearchIndex(tools[:2]).explain("remove parcel")
    assert only.words[0] == WordReading("remove", "remov", "synonyms", ("delet",))
    assert SearchIndex(tools[1:]).explain("parcel").methods == ()  # no intent: no method favoured


def test_numbers_count_for_nothing_at_value_weight_zero_and_a_stem_counts_once() -> None:
    """Rules: with ``value_weight: 0`` a query's numbers give no row (not rows scored 0); a stem written twice in a
    query ("order orders") counts once, the first word standing for it."""
    tools = (tool("getOrder", summary="order 5001", path="/orders/5001"), tool("ship", summary="ship"))
    silent = SearchIndex(tools, settings=dataclasses.replace(DEFAULT_SETTINGS, value_weight=0.0))
    assert silent.search("5001", k=2).rows == ()
    index = SearchIndex(tools)
    assert [w.term for w in index.words("order orders")] == ["order"]
    assert index.search("order orders", k=1).rows[0].score == index.search("order", k=1).rows[0].score


def test_only_the_tools_the_intent_lifts_show_its_bonus() -> None:
    tools = (tool("petGone", summary="delete pet", method="DELETE"), tool("petParcel", summary="pet parcel"))
    rows = SearchIndex(tools).search("delete pet parcel", k=2).rows
    fields = {r.tool_id: set(r.field_scores) for r in rows}
    assert "intent" in fields["petGone"] and "intent" not in fields["petParcel"]


def test_of_several_synonyms_the_best_scoring_one_counts_and_never_over_a_better_own_score() -> None:
    tools = (
        tool(
            "jobGone", summary="delete delete drop job", method="POST"
        ),  # "delete" outscores "drop", listed first
        tool("bothWays", summary="remove or purge"),  # its own word outscores its synonym
        tool("other", summary="unrelated"),
    )
    rows = {r.tool_id: r for r in SearchIndex(tools).search("remove", k=2).rows}
    assert rows["jobGone"].matched_terms == ("remov~delet",)
    assert rows["bothWays"].matched_terms == ("remov",) and "synonym" not in rows["bothWays"].field_scores


def test_a_word_the_collection_writes_only_in_other_forms_counts_its_stem_alone() -> None:
    tools = (tool("listOrders", summary="orders"), tool("getOrder", summary="order"))
    index = SearchIndex(tools, settings=NO_TARGET)
    doc = {tool_id: d for d, tool_id in enumerate(index.ids)}
    stem = index._model.posting("order") or {}
    scores = {r.tool_id: r.score for r in index.search("ordered", k=2).rows}
    assert scores == pytest.approx({t: stem[doc[t]] for t in ("getOrder", "listOrders")}, rel=1e-12)


def test_a_lifted_row_one_word_matched_shows_the_intent_and_rows_follow_the_given_top() -> None:
    tools = (tool("parcelA", summary="parcel"), tool("parcelB", summary="parcel", method="POST"))
    index = SearchIndex(tools)
    ranking = index.rank("list parcel", k=2)  # "list" asks to read and is in no tool: "parcel" alone matches
    rows = index.rows(ranking)
    assert [(r.tool_id, r.matched_terms) for r in rows] == [
        ("parcelA", ("parcel",)),
        ("parcelB", ("parcel",)),
    ]
    assert "intent" in rows[0].field_scores and "intent" not in rows[1].field_scores
    assert [r.tool_id for r in index.rows(ranking, top=ranking.top[1:])] == ["parcelB"]


def test_trim_empties_the_memo_tables_and_results_stay_the_same() -> None:
    """Rule: ``trim`` (called by the run after each gate) drops every memo table, and a query asked again after it
    gives the same rows, scores and evidence as before it."""
    index = SearchIndex(TOOLS)
    queries = [
        "Find the member delivery detail",
        "delete an order",
        "list lockers near 12345",
        "parcel status",
    ]
    before = [index.search(q, k=5) for q in queries]
    assert index._words and index._model._shares
    index.trim()
    assert not index._words and not index._values and not index._evidence.young and not index._evidence.old
    assert not index._model._shares
    assert [index.search(q, k=5) for q in queries] == before


def test_rank_of_is_the_rank_a_search_shows_without_its_rows() -> None:
    """Rule: ``rank_of`` (shadow rank's question) answers what ``search(...).rank_of`` answers, for every tool,
    every K, a query that matches nothing and a tool that is not in the collection."""
    from qlab.engine.builtin import BuiltinEngine
    from qlab.engine.types import SearchResult

    index = SearchIndex(TOOLS)
    queries = ["Find the member delivery detail", "delete an order", "list lockers near 12345", "zzqx", ""]
    for query in queries:
        for k in (1, 3, 8):
            result = index.search(query, k=k)
            for target in [*index.ids, "notATool"]:
                assert index.rank_of(query, k=k, target=target) == result.rank_of(target)

    class Reranked(BuiltinEngine):  # a subclass that ranks its own way: rank_of must ask its search
        def search(self, query: str, *, k: int) -> SearchResult:
            rows = super().search(query, k=k).rows
            return SearchResult(
                rows=tuple(dataclasses.replace(r, rank=len(rows) - i) for i, r in enumerate(rows))
            )

    from qlab.collection.model import Collection

    engine = Reranked(Collection(tools=tuple(TOOLS)))
    last = engine.search(queries[0], k=3).rows[-1]
    assert engine.rank_of(queries[0], k=3, target=last.tool_id) == last.rank == 1


def test_rank_of_answers_ties_at_the_k_th_place_and_a_shared_id_as_the_search_does() -> None:
    """Twelve tools with the same text tie on every query (their order is their id's); with the intent's prior
    on half of them, and a tool id two tools share: ``rank_of`` is ``search(...).rank_of`` at each K."""
    same = [
        tool(f"t{i:02d}", summary="list all orders", method="GET" if i % 2 else "DELETE") for i in range(12)
    ]
    shared = [
        tool("dup", summary="list all orders of a member"),
        tool("dup", summary="orders", method="POST"),
    ]
    index = SearchIndex([*same, *shared, *TOOLS])
    for query in ("orders", "list orders", "delete the orders", "show all member orders"):
        for k in (1, 4, 5, 6, 12):
            result = index.search(query, k=k)
            for target in [*index.ids, "dup"]:
                assert index.rank_of(query, k=k, target=target) == result.rank_of(target), (query, k, target)


def test_rank_of_on_the_pruned_path_is_the_rank_a_search_shows() -> None:
    """Large postings (the MaxScore path), where ``rank_of`` prunes further with its target's own score: for the
    tools around the k-th place, tools ranked deep, random ones and ones the query misses, with and without the
    intent's prior, ``rank_of`` is ``search(...).rank_of``."""
    import random

    rng = random.Random(7)
    vocabulary = ["member", "delivery", "order", "parcel", "carrier", "invoice", "refund", "address"]
    methods = ("GET", "POST", "DELETE", "PUT")
    tools = tuple(
        tool(f"op{i:04d}", summary=" ".join([*rng.sample(vocabulary, 3), "number", f"item{i % 29}"]), path="/x",
             method=methods[i % 4])
        for i in range(900)
    )  # fmt: skip
    index = SearchIndex(tools)
    for verb in ("", "delete", "show"):
        for _ in range(5):
            query = " ".join(
                [verb, *rng.sample([*vocabulary, "number", f"item{rng.randrange(29)}"], 4)]
            ).strip()
            assert sum(len(w.by_doc) for w in index.words(query)) >= 512  # the pruned path
            for k in (1, 5, 10, 50):
                deep = index.search(query, k=k + 40)
                result = index.search(query, k=k)
                targets = {row.tool_id for row in deep.rows} | set(rng.sample(index.ids, 20))
                for target in targets:
                    assert index.rank_of(query, k=k, target=target) == result.rank_of(target), (
                        query,
                        k,
                        target,
                    )


def test_rank_of_answers_a_miss_without_ranking() -> None:
    """Shadow rank asks ``rank_of`` of every affected case, most of them misses: a target that matches no word
    of the query, or that the query's best word alone puts k tools above, is answered without a ranking."""
    index = SearchIndex(TOOLS, settings=NO_TARGET)
    ranked: list[str] = []
    rank = index._rank

    def counted(reading, words, k, floor=0.0, keep=-1):  # type: ignore[no-untyped-def]
        ranked.append(" ".join(reading.content))
        return rank(reading, words, k, floor, keep)

    index._rank = counted  # type: ignore[method-assign]
    query = "Find the member delivery detail"
    top = [row.tool_id for row in index.search(query, k=len(TOOLS)).rows]
    ranked.clear()
    unmatched = next(t for t in index.ids if t not in top)
    assert index.rank_of(query, k=3, target=unmatched) is None and not ranked
    assert index.rank_of(query, k=1, target=top[-1]) is None and not ranked  # the best word alone outranks it
    assert index.rank_of(query, k=3, target=top[0]) == 1 and len(ranked) == 1


def test_the_pool_completion_keeps_a_tool_whose_score_ties_the_k_th_through_rounding() -> None:
    """Rule: after each word left, the pool drops a tool only when its score plus what the words still left could
    add is below the k-th score by more than rounding. ``rest`` is a float sum taken in another order than a tool's
    score: here (1000 + 0.159) - 1000 is 0.15899999999999181, so tool 0's bound 6.631 + rest falls just short of
    6.79, the score it reaches (6.631 + 0.159) and tool 1 already has; tied, tool 0 (the lower number) is first."""
    from types import SimpleNamespace
    from typing import Any

    from qlab.engine.index import _completed

    far: Any = SimpleNamespace(by_doc={}, ub=1000.0)  # the best word left, in no pool tool
    last: Any = SimpleNamespace(by_doc={0: 0.159}, ub=0.159)
    tied = 6.631 + 0.159
    rest = 0.0 + 1000.0 + 0.159
    assert 6.631 + (rest - 1000.0) < tied  # the rounding this rule is about
    done = _completed({0: 6.631, 1: tied}, [far, last], rest=rest, threshold=tied, k=1)
    assert done == {0: tied, 1: tied}


def test_the_evidence_memo_keeps_two_bounded_generations_and_results_stay_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule: the rows' shared evidence is memoized in two generations of ``_EVIDENCE_GENERATION`` entries (at most
    twice that held); an entry of the old generation used again moves to the young one and is the same object
    (so its JSON memo still applies); rows are the same whatever the generation size."""
    import qlab.engine.index as index_module

    queries = [f"{verb} {noun} {extra}" for verb in ("find", "list", "delete", "show")
               for noun in ("member delivery", "order", "parcel locker", "parcel status")
               for extra in ("detail", "near 12345", "today")]  # fmt: skip
    unbounded = SearchIndex(TOOLS)
    expected = [unbounded.search(q, k=5) for q in queries]
    assert len(unbounded._evidence) > 4  # the queries make enough distinct evidence to turn generations over
    monkeypatch.setattr(index_module, "_EVIDENCE_GENERATION", 2)
    index = SearchIndex(TOOLS)
    for q, want in zip(queries, expected, strict=True):
        assert index.search(q, k=5) == want
        assert len(index._evidence.young) <= 2 + 5 and len(index._evidence.old) <= 2 + 5
    # an old entry used again moves to the young generation as the very same object
    key, kept = next(iter(index._evidence.old.items()))
    index._evidence.young = {}
    d, up, *matched = key
    rows = index._rows([(d, 1.0)], list(matched), (d,) if up else (), index._bonus)
    assert key in index._evidence.young and index._evidence.young[key] is kept
    assert rows[0].field_scores is kept[0] and rows[0].matched_terms is kept[1]


def _kubernetes_like_tools() -> list[Tool]:
    """List operations that all carry the same boilerplate parameters, and one operation with its own text."""
    pretty = Parameter(
        "pretty",
        "query",
        False,
        {"type": "string"},
        description="If 'true', then the output is pretty printed.",
    )
    watch = Parameter(
        "watch",
        "query",
        False,
        {"type": "boolean"},
        description="Watch for changes to the described resources and return them as a stream of add, update, and"
        " remove notifications.",
    )
    follow = Parameter(
        "follow",
        "query",
        False,
        {"type": "boolean"},
        description="Follow the log: return its new lines as a stream as they are written.",
    )
    name = Parameter("name", "path", True, {"type": "string"}, description="name of the Pod")
    kinds = ["Pod", "Service", "Node", "Secret", "ConfigMap", "Job", "Lease", "Event"]
    tools = [
        tool(
            f"list{k}",
            description=f"list or watch objects of kind {k}",
            path=f"/api/v1/{k.lower()}s",
            params=(pretty, watch),
        )
        for k in kinds
    ]
    log = tool(
        "readPodLog",
        description="read log of the specified Pod",
        path="/api/v1/pods/{name}/log",
        params=(name, pretty, follow),
    )
    return [*tools, log]


def test_text_many_tools_share_counts_less_than_text_one_tool_has() -> None:
    """A parameter description on most operations (Kubernetes' ``watch``) says "return" and "stream" as the one
    operation whose own parameter says them does: the shared text counts next to nothing, so that operation ranks
    first (it ranked below all eight list operations when every string counted whole)."""
    tools = _kubernetes_like_tools()
    rows = SearchIndex(tools).search("return a stream", k=3).rows
    assert rows[0].tool_id == "readPodLog"
    assert rows[0].score > 5 * rows[1].score
    whole = SearchIndex(tools, settings=dataclasses.replace(DEFAULT_SETTINGS, shared_discount=0.0))
    assert whole.search("return a stream", k=1).rows[0].tool_id != "readPodLog"


def test_a_string_counts_less_the_more_places_hold_it() -> None:
    weights = [string_weight(places, 1000, 1.0) for places in (1, 2, 10, 100, 500, 1000)]
    assert weights[0] == 1.0
    assert all(a > b for a, b in itertools.pairwise(weights))
    assert weights[-1] < 0.01
    assert string_weight(500, 1000, 0.0) == 1.0  # no discount
    assert string_weight(5000, 1000, 1.0) == weights[-1]  # more places than tools: as many as tools


def _crm_notes() -> list[Tool]:
    """A CRM's notes and leads: a list and an item operation per resource, and the changes of one note."""
    note, lead = param("id"), param("id")
    return [
        tool("notesAll", summary="List notes", path="/crm/notes"),
        tool("notesOne", summary="Get note", path="/crm/notes/{id}", params=(note,)),
        tool("notesAdd", summary="Create note", method="POST", path="/crm/notes"),
        tool("notesUpdate", summary="Update note", method="PATCH", path="/crm/notes/{id}", params=(note,)),
        tool("notesDelete", summary="Delete note", method="DELETE", path="/crm/notes/{id}", params=(note,)),
        tool("leadsAll", summary="List leads", path="/crm/leads"),
        tool("leadsOne", summary="Get lead", path="/crm/leads/{id}", params=(lead,)),
    ]


def test_a_request_for_a_collection_favours_the_operation_on_the_collection() -> None:
    """ "show all my notes" asks for many: the read operation on the collection's path ranks above the one on an
    item's path, which the singular "note" of its summary put first when only the method counted."""
    index = SearchIndex(_crm_notes())
    for query in ("show all my notes", "get all notes", "show each note"):
        rows = index.search(query, k=2).rows
        assert [r.tool_id for r in rows] == ["notesAll", "notesOne"], query
        assert rows[0].field_scores["scope"] == rows[0].field_scores["intent"] > 0
        assert "scope" not in rows[1].field_scores


def test_a_request_for_one_item_favours_the_operation_on_an_item() -> None:
    """Two read operations the words cannot tell apart (the same summary): "one" says the request is about a
    single conversation, so the operation on an item's path wins the tie the tool ids used to break."""
    sid = param("Sid")
    tools = [
        tool("conversations.all", summary="Conversations", path="/v1/Conversations"),
        tool("conversations.get", summary="Conversations", path="/v1/Conversations/{Sid}", params=(sid,)),
    ]
    index = SearchIndex(tools)
    assert index.search("show one conversation", k=1).rows[0].tool_id == "conversations.get"
    assert index.search("show all conversations", k=1).rows[0].tool_id == "conversations.all"
    assert index.rank_of("show one conversation", k=2, target="conversations.all") == 2


def test_a_phrasal_verb_ranks_the_operation_of_its_method_first() -> None:
    """ "throw away a draft" deletes: "throw" alone says nothing and "away" is no word of the collection, so only
    the intent of the phrasal verb tells the delete from the create and the update of a draft."""
    draft = param("id")
    tools = [
        tool("drafts.create", summary="Creates a draft", method="POST", path="/drafts"),
        tool("drafts.update", summary="Replaces a draft", method="PUT", path="/drafts/{id}", params=(draft,)),
        tool(
            "drafts.delete", summary="Deletes a draft", method="DELETE", path="/drafts/{id}", params=(draft,)
        ),
    ]
    rows = SearchIndex(tools).search("throw away a draft", k=3).rows
    assert rows[0].tool_id == "drafts.delete"
    assert rows[0].field_scores["intent"] > 0


def test_a_verb_is_not_expanded_into_a_word_that_names_a_resource_of_the_api() -> None:
    """ "register" means "create", also "setup" in the vocabulary; in an API with SetupIntents "setup" names a
    resource, so a request to register something does not land on them."""
    tools = [
        tool("PostSetupIntents", summary="Create a SetupIntent", method="POST", path="/v1/setup_intents"),
        tool(
            "GetSetupIntentsIntent",
            summary="Retrieve a SetupIntent",
            path="/v1/setup_intents/{intent}",
            params=(param("intent"),),
        ),
        tool("PostAccounts", summary="Create an account", method="POST", path="/v1/accounts"),
        tool("PostWebhookEndpoints", summary="Create a webhook endpoint", method="POST", path="/v1/webhooks"),
    ]
    rows = SearchIndex(tools).search("register", k=4).rows
    assert rows[0].tool_id == "PostAccounts"
    assert not [term for row in rows for term in row.matched_terms if term.endswith("~setup")]


def test_a_reading_verb_does_not_match_an_operation_that_changes_through_a_synonym() -> None:
    """ "show" means "read" too; "Mark notifications as read" (PUT) changes them, so "show my notifications" finds
    the list, which the synonym "read" ranked below the PUT."""
    tools = [
        tool(
            "activity/mark-notifications-as-read",
            summary="Mark notifications as read",
            method="PUT",
            path="/notifications",
        ),
        tool(
            "activity/list-notifications",
            summary="List notifications for the authenticated user",
            path="/notifications/list",
        ),
    ]
    rows = SearchIndex(tools).search("show my notifications", k=2).rows
    assert [r.tool_id for r in rows] == ["activity/list-notifications", "activity/mark-notifications-as-read"]
    assert rows[1].matched_terms == ("notif",)


def test_a_word_most_tools_have_is_not_expanded_into_its_synonyms() -> None:
    """A conversations API says "conversation" on every operation; "chat" (a synonym) only in the chat service's
    parameter. "fetch a conversation" finds the conversation, not the operations that say "chat", which the rarer
    synonym ranked first when the word was expanded."""
    sid, chat = param("Sid"), param("ChatServiceSid")
    tools = [
        tool(
            "FetchConversation", summary="Fetch a conversation", path="/v1/Conversations/{Sid}", params=(sid,)
        ),
        tool("ListConversation", summary="List conversations", path="/v1/Conversations"),
        tool(
            "ListConversationMessage",
            summary="List the messages of a conversation",
            path="/v1/Conversations/{Sid}/Messages",
            params=(sid,),
        ),
        tool(
            "FetchServiceUser",
            summary="Fetch a user of a conversation service",
            path="/v1/Services/{ChatServiceSid}/Users/{Sid}",
            params=(chat, sid),
        ),
    ]
    rows = SearchIndex(tools).search("fetch a conversation", k=2).rows
    assert rows[0].tool_id == "FetchConversation"
    assert "convers" in rows[1].matched_terms  # its own word, not "convers~chat"


def test_a_sibling_whose_target_the_request_names_is_put_first_within_the_head() -> None:
    """Rule: among the head's rows, one whose target (its path's last name, ``shape.target``) the request's words
    name gets ``target_weight`` x ln(1 + N), times the share of the target named, times its score over the best
    score, shown as ``target``. "create a new project" names the projects, not the project roles (whose
    description says "new project")."""
    tools = (
        tool("createProject", method="POST", path="/project", summary="Create project",
             description="Creates a project based on a project type template."),
        tool("createProjectRole", method="POST", path="/role", summary="Create project role",
             description="Creates a new project role with no default actors."),
        tool("createProjectCategory", method="POST", path="/projectCategory", summary="Create project category"),
        tool("getAllProjects", path="/project", summary="Get all projects"),
        tool("createIssue", method="POST", path="/issue", summary="Create issue"),
        tool("deleteProject", method="DELETE", path="/project/{projectIdOrKey}", summary="Delete project"),
        tool("getProjectRole", path="/role/{id}", summary="Get project role by ID"),
        *(tool(f"get{name.title()}", path=f"/{name}", summary=f"Get the {name}")
          for name in ("dashboard", "filter", "group", "label", "priority", "screen", "user", "version", "workflow")),
    )  # fmt: skip
    query = "create a new project for the mobile team"
    plain = SearchIndex(tools, settings=NO_TARGET).search(query, k=3).rows
    assert [r.tool_id for r in plain] == ["createProjectRole", "createProject", "createProjectCategory"]
    rows = SearchIndex(tools).search(query, k=3).rows
    assert [r.tool_id for r in rows] == ["createProject", "createProjectRole", "createProjectCategory"]
    before = {r.tool_id: r.score for r in plain}
    unit = DEFAULT_SETTINGS.target_weight * math.log(1 + len(tools))
    best = before["createProjectRole"]  # the best score before any target: no target of its is named
    assert rows[0].field_scores["target"] == pytest.approx(unit * before["createProject"] / best, rel=1e-12)
    assert "target" not in rows[1].field_scores and rows[1].score == before["createProjectRole"]
    third = unit / 2 * before["createProjectCategory"] / best  # "project" of "project category"
    assert rows[2].field_scores["target"] == pytest.approx(third, rel=1e-12)
    for row in rows:
        assert math.isclose(sum(row.field_scores.values()), row.score, rel_tol=1e-9)
        assert row.score == pytest.approx(
            before[row.tool_id] + row.field_scores.get("target", 0.0), rel=1e-12
        )


def test_a_row_below_the_head_never_enters_it() -> None:
    """Rule: only the head's rows are re-ordered. With a head of two, the invoices' list passes the statement;
    the invoice's get, third, whose named target would lift it above the statement too, stays third with the
    words' score and no ``target``."""
    tools = (
        tool("invoiceStatement", summary="The statement of an invoice", path="/statements"),
        tool("listAll", summary="All invoices of an account", path="/invoices"),
        tool("fetchOne", summary="One of them", path="/invoices/{id}"),
        tool("listCarriers"),
        tool("getWeather"),
        tool("listOrders"),
    )
    plain = SearchIndex(tools, settings=NO_TARGET).search("invoice", k=3).rows
    assert [r.tool_id for r in plain] == ["invoiceStatement", "listAll", "fetchOne"]
    strong = dataclasses.replace(DEFAULT_SETTINGS, target_weight=5.0)
    rows = SearchIndex(tools, settings=dataclasses.replace(strong, target_head=2)).search("invoice", k=3).rows
    assert [r.tool_id for r in rows] == ["listAll", "invoiceStatement", "fetchOne"]
    assert rows[2].score == plain[2].score and "target" not in rows[2].field_scores
    wider = (
        SearchIndex(tools, settings=dataclasses.replace(strong, target_head=3)).search("invoice", k=3).rows
    )
    assert [r.tool_id for r in wider] == ["listAll", "fetchOne", "invoiceStatement"]  # in a head of three


def test_the_head_keeps_its_rows_and_the_rows_below_it_keep_their_places() -> None:
    """Large postings (the MaxScore path), two sources: against the ranking without targets, the Top-K for any K
    of the head's size or more holds the same tools, the rows below the head are the same rows with the same
    scores, and the head is re-ordered by each named target (tools of the best row's source only). A Top-k
    smaller than the head is the first k rows of the head's, and ``rank_of`` is ``search(...).rank_of``."""
    import random

    rng = random.Random(5)
    vocabulary = ["member", "delivery", "order", "parcel", "carrier", "invoice", "refund", "address"]
    methods = ("GET", "POST", "DELETE", "PUT")
    tools = tuple(
        dataclasses.replace(
            tool(f"op{i:04d}", summary=" ".join([*rng.sample(vocabulary, 3), "number"]),
                 path=f"/{rng.choice(vocabulary)}/{{id}}" if i % 3 else f"/{rng.choice(vocabulary)}",
                 method=methods[i % 4]),
            source=("shop", "crm")[i % 2],
        )
        for i in range(900)
    )  # fmt: skip
    index, plain = SearchIndex(tools), SearchIndex(tools, settings=NO_TARGET)
    by_id = {t.id: t for t in tools}
    head = DEFAULT_SETTINGS.target_head
    unit = DEFAULT_SETTINGS.target_weight * math.log(1 + len(tools))
    reordered = 0
    for verb, k in (("delete", 15), ("show", 10), ("", 40), ("delete", 600)):
        for _ in range(4):
            query = " ".join([verb, *rng.sample(vocabulary, 2), "number"]).strip()
            assert sum(len(w.by_doc) for w in index.words(query)) >= 512  # the pruned path
            named = {w.term for w in index.words(query)}
            result, before = index.search(query, k=k).rows, plain.search(query, k=k).rows
            for cut in range(head, k + 1):
                assert {r.tool_id for r in result[:cut]} == {r.tool_id for r in before[:cut]}, (query, cut)
            assert [(r.tool_id, r.score) for r in result[head:]] == [
                (r.tool_id, r.score) for r in before[head:]
            ]
            source = by_id[before[0].tool_id].source  # the best row's
            totals = []  # the head's scores once each named target (its path's first name) is added
            for r in before[:head]:
                aim = by_id[r.tool_id]
                named_here = index.analyzer.term(aim.path.split("/")[1]) in named  # "/order/{id}" -> "order"
                gain = unit * r.score / before[0].score if named_here and aim.source == source else 0.0
                totals.append(r.score + gain)
            order = sorted(range(head), key=totals.__getitem__, reverse=True)  # stable: ties keep their order
            assert [r.tool_id for r in result[:head]] == [before[i].tool_id for i in order], query
            assert [r.score for r in result[:head]] == pytest.approx([totals[i] for i in order], rel=1e-12)
            reordered += [r.tool_id for r in result[:head]] != [r.tool_id for r in before[:head]]
            ids = [r.tool_id for r in result]
            for small in (1, 3, head - 1):
                assert [r.tool_id for r in index.search(query, k=small).rows] == ids[:small]
            if k <= 40:
                for aim_id in [*ids[: head + 2], *rng.sample(index.ids, 10)]:
                    for kk in (3, k):
                        found = index.rank_of(query, k=kk, target=aim_id)
                        assert found == index.search(query, k=kk).rank_of(aim_id), (query, aim_id, kk)
    assert reordered >= 3  # the head did change


def test_a_target_counts_among_the_tools_of_the_best_rows_source_only() -> None:
    """Rule: in a collection of several sources, a target tells the operations of one API apart: only the head's
    rows of the best row's source get it. A tool without a path is targeted by its name."""
    shop = (
        tool("listOrders", summary="list the orders of the shop", path="/orders"),
        tool("getOrder", summary="one order of the shop", path="/orders/{id}"),
    )
    other = dataclasses.replace(tool("orderStatus", summary="status", path="/status"), source="crm")
    helper = dataclasses.replace(tool("orders", summary="order helper", path="/orders"), source="crm")
    mcp = dataclasses.replace(tool("orderBot", summary="answers about an order"), path=None, source="bots")
    index = SearchIndex((*shop, other, helper, mcp))
    rows = {r.tool_id: r for r in index.search("list the shop orders", k=5).rows}
    assert next(iter(rows)) == "listOrders"
    assert rows["listOrders"].field_scores["target"] > 0 and "target" not in rows["orders"].field_scores
    bots = {r.tool_id: r for r in index.search("ask the order bot", k=5).rows}
    assert next(iter(bots)) == "orderBot" and bots["orderBot"].field_scores["target"] > 0  # its name
    assert all("target" not in r.field_scores for r in bots.values() if r.tool_id != "orderBot")


def test_a_reviewed_alias_is_a_target_too() -> None:
    """Rule: a tool's aliases count as targets beside its path's: the best named one counts. "where is parcel"
    names the parcel alone, so with the alias "where is the parcel" the tracking operation is as fully named as
    the parcel's own get."""
    track = tool("trackParcel", summary="Track a parcel", path="/parcels/{id}/tracking")
    tools = (track, tool("getParcel", summary="Get a parcel", path="/parcels/{id}"), tool("listCarriers"))
    unit = DEFAULT_SETTINGS.target_weight * math.log(1 + len(tools))
    plain = _named_shares(SearchIndex(tools).search("where is parcel P-1", k=3).rows, unit)
    assert plain == pytest.approx({"getParcel": 1.0, "trackParcel": 0.5}, rel=1e-12)  # "parcels tracking"
    aliased = (dataclasses.replace(track, aliases=("scan history", "where is the parcel")), *tools[1:])
    rows = _named_shares(SearchIndex(aliased).search("where is parcel P-1", k=3).rows, unit)
    assert rows == pytest.approx({"getParcel": 1.0, "trackParcel": 1.0}, rel=1e-12)


def test_a_name_targets_what_the_tool_acts_on_not_its_verb() -> None:
    """Rule: a tool without a path is targeted by its name less the words the vocabulary reads as verbs (what it
    does is the intent's to weigh). "find a travel guide" names all of ``getTravelGuide``'s target (travel guide)
    and nothing of ``findAgency``'s (agency): the shared verb "find" lifts neither."""
    tools = tuple(
        dataclasses.replace(tool(name, summary=summary), path=None, method=None, kind="mcp")
        for name, summary in (
            ("findAgency", "Travel agencies that find you a guide"),
            ("getTravelGuide", "A guide for your travel"),
            ("listCarriers", "Couriers"),
        )
    )
    unit = DEFAULT_SETTINGS.target_weight * math.log(1 + len(tools))
    rows = SearchIndex(tools).search("find a travel guide", k=3).rows
    assert {r.tool_id for r in rows} == {"findAgency", "getTravelGuide"}
    assert _named_shares(rows, unit) == pytest.approx({"getTravelGuide": 1.0}, rel=1e-12)


def test_by_default_the_targets_never_change_which_tools_make_the_top_5() -> None:
    """Rule: the default head is the Top-5, so the targets order the five best rows and no row below them
    enters: a sixth row whose target the request names stays sixth (a head of ten would lift it into the five)."""
    tools = (
        *(tool(f"invoiceReport{n}", summary=f"Invoice report {n} invoice", path=f"/reports/r{n}") for n in range(5)),
        tool("listInvoices", summary="All invoices", path="/invoices"),
        *(tool(f"other{n}", summary=f"other {n}", path=f"/other{n}") for n in range(6)),
    )  # fmt: skip
    plain = SearchIndex(tools, settings=NO_TARGET).search("invoice", k=6).rows
    assert plain[5].tool_id == "listInvoices"
    rows = SearchIndex(tools).search("invoice", k=6).rows
    assert DEFAULT_SETTINGS.target_head == 5 and rows[5].tool_id == "listInvoices"
    assert "target" not in rows[5].field_scores
    wider = dataclasses.replace(DEFAULT_SETTINGS, target_head=10)
    assert SearchIndex(tools, settings=wider).search("invoice", k=6).rows[0].tool_id == "listInvoices"


def _named_shares(rows: tuple[SearchRow, ...], unit: float) -> dict[str, float]:
    """Each row's share of its target named: its ``target`` over ``unit`` times its score before the target over
    the best such score (the rows must hold the best row)."""
    own = {r.tool_id: r.score - r.field_scores.get("target", 0.0) for r in rows}
    best = max(own.values())
    return {
        r.tool_id: r.field_scores["target"] / (unit * own[r.tool_id] / best)
        for r in rows
        if "target" in r.field_scores
    }

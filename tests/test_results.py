"""JSON kept as text in a result: PackedJSON and its run's JSONPack (what the search stage keeps per case)."""

from __future__ import annotations

import json
import random
import threading
from types import SimpleNamespace
from typing import Any

from qlab.results import (
    CheckedJSON,
    EncodedJSON,
    JSONPack,
    PackedJSON,
    checked,
    decoded,
    is_json_text,
    json_text,
    plain,
)


def _rows(i: int) -> CheckedJSON:
    rows = [
        {
            "tool_id": f"getThing{i % 97}",
            "rank": r,
            "score": round(10.0 / r + i / 1000, 4),
            "field_scores": {"summary": 1.5, "path": 0.25},
            "matched_terms": ["thing", f"w{i % 13}", "ünïcode"],
            "corrections": {},
        }
        for r in range(1, 6)
    ]
    return CheckedJSON.of(rows)


def test_every_text_reads_back_in_any_order_across_compressed_blocks() -> None:
    # ~2 texts a block, fewer blocks kept than a shuffled read visits
    pack = JSONPack(block_size=2048, keep=2, plain_limit=0)
    texts = [_rows(i) for i in range(300)]
    packed = [pack.add(t) for t in texts]
    assert len(pack._blocks) > 50  # compressed blocks, not one open buffer
    order = list(range(300))
    random.Random(7).shuffle(order)
    for i in order:
        assert packed[i].text() == texts[i]
    assert [p.text() for p in packed] == texts  # and in the order they were added


def test_a_pack_holds_a_fraction_of_the_text_it_keeps() -> None:
    pack = JSONPack(plain_limit=0)
    texts = [_rows(i) for i in range(2000)]
    for t in texts:
        pack.add(t)
    raw = sum(len(t.encode()) for t in texts)
    held = sum(len(b.result()) for b in pack._blocks) + len(pack._open)
    assert held * 4 < raw, (held, raw)


def test_a_text_larger_than_a_block_gets_a_block_of_its_own() -> None:
    pack = JSONPack(block_size=64, plain_limit=0)
    big, small = CheckedJSON.of(["x" * 500]), CheckedJSON.of([1])
    a, b, c = pack.add(small), pack.add(big), pack.add(small)
    assert (a.text(), b.text(), c.text()) == (small, big, small)


def test_threads_adding_at_once_each_read_back_their_own_text() -> None:
    pack = JSONPack(block_size=4096, plain_limit=0)
    out: dict[int, PackedJSON] = {}

    def work(base: int) -> None:
        for i in range(base, base + 200):
            out[i] = pack.add(_rows(i))

    threads = [threading.Thread(target=work, args=(n * 200,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(out[i].text() == _rows(i) for i in range(800))


def test_packed_json_is_text_to_every_reader_and_checked() -> None:
    pack = JSONPack(plain_limit=0)
    text = _rows(3)
    packed = pack.add(text, top_tool="getThing3")
    assert is_json_text(packed) and checked(packed) and packed.top_tool == "getThing3"
    assert json_text(packed) == text and decoded(packed) == json.loads(text)
    assert plain({"rows": packed, "hit": True}) == {"rows": json.loads(text), "hit": True}
    assert checked(CheckedJSON.of([])) and not checked(EncodedJSON.of([])) and not checked("[]")
    assert json_text("[]") is None and not is_json_text(["a"]) and decoded(["a"]) == ["a"]


def test_texts_are_kept_as_they_are_until_the_pack_holds_its_limit_of_them() -> None:
    """A small run does not pay for packing; a large one holds at most ``plain_limit`` bytes of text."""
    texts = [_rows(i) for i in range(40)]
    limit = sum(map(len, texts[:10]))  # ten texts fit under the limit
    pack = JSONPack(plain_limit=limit)
    kept = [pack.add(t, top_tool=f"getThing{i % 97}") for i, t in enumerate(texts)]
    assert all(k is t for k, t in zip(kept[:10], texts[:10], strict=True))  # the very text, unpacked
    assert all(type(k) is PackedJSON for k in kept[10:])
    assert [json_text(k) for k in kept] == texts
    assert JSONPack(plain_limit=10**9).add(texts[0]) is texts[0]


def test_a_result_shares_its_latency_dict_with_its_record_only_when_the_values_are_as_written() -> None:
    """Rule: ``to_dict`` writes latencies rounded to 3 places; when the stages recorded them rounded (they do) the
    record holds the result's own dict (one per case, not two), else a rounded copy."""
    from qlab.results import CaseResult

    result = CaseResult("c", "s", "search", latency_ms={"search": 0.123})
    assert result.to_dict()["latency_ms"] is result.latency_ms
    raw = CaseResult("c", "s", "search", latency_ms={"search": 0.12345, "select": 1.5})
    written = raw.to_dict()["latency_ms"]
    assert written == {"search": 0.123, "select": 1.5} and written is not raw.latency_ms
    assert raw.latency_ms == {"search": 0.12345, "select": 1.5}  # the result itself is left as it is


def test_the_stages_record_latencies_as_the_artifact_writes_them() -> None:
    """Rule: an engine call records its latency rounded to 3 places (so a record shares the result's dict)."""
    from types import SimpleNamespace

    from qlab.results import CaseResult
    from qlab.stages.engine_calls import call

    result = CaseResult("c", "s", "search")
    ctx: Any = SimpleNamespace(engine=None)
    assert call(result, "search", "search", ctx, lambda: 42) == 42
    assert call(result, "select", "target_selection", ctx, lambda: 1 / 0) is None
    for value in result.latency_ms.values():
        assert round(value, 3) == value


def test_a_result_without_assertions_holds_no_list_of_its_own() -> None:
    """Rule: a case without assertions shares the empty tuple (no list per result); a stage adding its assertion
    results gives the result a new list, never touching another result's."""
    from qlab.results import AssertionResult, CaseResult

    first, second = CaseResult("a", "s", "search"), CaseResult("b", "s", "search")
    assert first.assertions == () and first.assertions is second.assertions
    from qlab.engine.types import SearchResult
    from qlab.project.model import Assertion
    from qlab.stages.engine_checks import check_search

    case: Any = SimpleNamespace(assertions=(Assertion("top_1_is", {"tool": "getOrder"}),))
    check_search(case, first, SearchResult(rows=()))
    assert len(first.assertions) == 1 and isinstance(first.assertions[0], AssertionResult)
    assert second.assertions == ()

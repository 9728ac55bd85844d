"""The memo bounded by recency (two generations)."""

from __future__ import annotations

from qlab.adapters.memo import ByIdentity, Generations


def test_two_generations_keep_what_is_still_used_and_hold_at_most_twice_their_size() -> None:
    """Rule: the young generation turns old when full (the old one dropped); an old entry asked for again moves
    back to the young one and survives the next turn; the memo never holds more than twice its size."""
    memo: Generations[str, int] = Generations(2)
    for i, key in enumerate("abcd"):
        memo.put(key, i)
        assert len(memo.young) <= 2 and len(memo.old) <= 2
    assert memo.young == {"c": 2, "d": 3} and memo.old == {"a": 0, "b": 1}
    assert memo.get("a") == 0  # from the old generation, moved back: the young one was full, so it turned
    assert memo.young == {"a": 0} and memo.old == {"c": 2, "d": 3}
    assert memo.get("b") is None  # dropped with the generation it was in
    memo.put("e", 4)
    memo.put("f", 5)  # a turn: "a" survives it in the old generation, "c" and "d" are gone
    assert memo.get("c") is None and memo.get("a") == 0
    assert memo.young == {"f": 5, "a": 0} and memo.old == {"a": 0, "e": 4}  # (moved, not yet dropped there)
    memo.clear()
    assert len(memo) == 0 and memo.get("a") is None


def test_a_memo_by_identity_answers_only_for_the_object_it_kept() -> None:
    """Rule: an entry is the value kept for that very object; under its id, another object (equal or not, or one
    that got the id after the first was gone) finds nothing."""
    memo: ByIdentity[str] = ByIdentity(2)
    first, twin = {"a": 1}, {"a": 1}
    assert memo.keep(first, "one") == "one"
    assert memo.find(first) == "one" and memo.find(twin) is None
    memo.put(id(twin), (first, "stale"))  # as if ``twin`` had got the id of an object kept before
    assert memo.find(twin) is None
    for n in range(10):
        memo.keep([n], "x")
    assert len(memo) <= 4

"""Misspelt query words are rescued against the vocabulary, short or distant words are not."""

from __future__ import annotations

from qlab.engine.spelling import Speller

VOCABULARY = {"delivery": 5, "deliveries": 2, "member": 7, "tracking": 3, "order": 9, "card": 1}


def test_one_edit_is_corrected() -> None:
    speller = Speller(VOCABULARY)
    assert speller.correct("delivry") == "delivery"  # deletion
    assert speller.correct("membr") == "member"
    assert speller.correct("trakcing") == "tracking"  # adjacent transposition
    assert speller.correct("tracklng") == "tracking"  # substitution


def test_known_short_and_distant_words_are_not_corrected() -> None:
    speller = Speller(VOCABULARY)
    assert speller.correct("delivery") is None  # already in the vocabulary
    assert speller.correct("cart") is None  # too short to guess
    assert speller.correct("membership") is None  # too far
    assert speller.correct("12345") is None  # not a word


def test_ties_prefer_the_more_frequent_word_then_alphabetical_order() -> None:
    speller = Speller({"shipment": 1, "shipmint": 4})
    assert speller.correct("shipmant") == "shipmint"
    assert Speller({"abcdef": 1, "abcdeg": 1}).correct("abcdex") == "abcdef"


def test_results_are_memoized() -> None:
    speller = Speller(VOCABULARY)
    assert speller.correct("delivry") == speller.correct("delivry") == "delivery"

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


def test_two_equally_close_words_of_different_stems_are_no_confident_answer() -> None:
    assert Speller({"shipment": 1, "shipmint": 4}).correct("shipmant") is None
    assert Speller({"abcdef": 1, "abcdeg": 1}).correct("abcdex") is None
    # forms of one stem are one answer: the closest, then the more frequent
    assert Speller({"parcels": 1, "parcel": 4}).correct("parcelx") == "parcel"


def test_real_words_and_two_typo_short_words_are_left_alone() -> None:
    """Only non-words are corrected: "mother" is a word (not "others"), "pending" too (not "opening"); a
    made-up "scofp" is two edits from "scope", too far for a five-letter word."""
    speller = Speller({"others": 5, "opening": 3, "scope": 4, "birthday": 2, "redemption": 1})
    assert [speller.correct(w) for w in ("mother", "pending", "scofp")] == [None, None, None]
    assert speller.correct("bitrhday") == "birthday"  # one transposition
    assert speller.correct("redemptionn") == "redemption"
    # the English list is what keeps a real word one typo from a vocabulary word: "house" is not "horse"
    assert Speller({"horse": 5}).correct("house") is None
    assert Speller({"horse": 5}, english=frozenset()).correct("house") == "horse"


def test_results_are_memoized() -> None:
    speller = Speller(VOCABULARY)
    assert speller.correct("delivry") == speller.correct("delivry") == "delivery"


def test_scanning_and_the_deletion_index_find_the_same_corrections() -> None:
    """The first lookups scan the vocabulary, later ones use the deletion index: the answers must not depend on
    which one ran."""
    import random

    rng = random.Random(7)
    letters = "abcdefghij"
    vocabulary = {"".join(rng.choices(letters, k=rng.randint(4, 9))): rng.randint(1, 5) for _ in range(400)}
    typos = []
    for word in list(vocabulary)[:150]:
        i = rng.randrange(len(word))
        edits = [
            word[:i] + word[i + 1 :],  # deletion
            word[:i] + rng.choice(letters) + word[i:],  # insertion
            word[:i] + rng.choice(letters) + word[i + 1 :],  # substitution
            word[:i] + word[i + 1 : i + 2] + word[i : i + 1] + word[i + 2 :],  # transposition
            word[:i] + rng.choice(letters) * 2 + word[i + 1 :],  # two edits
        ]
        typos += edits
    scanning = Speller(vocabulary, scans_per_word=100.0)
    indexed = Speller(vocabulary, scans_per_word=0.0)
    answers = [scanning.correct(typo) for typo in typos]
    assert answers == [indexed.correct(typo) for typo in typos]
    assert sum(answer is not None for answer in answers) > 300

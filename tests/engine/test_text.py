"""The analyzer: identifier splitting, stopwords, Snowball stemming, memoization."""

from __future__ import annotations

import pytest

from qlab.engine.text import STOPWORDS, Analyzer, normalize_name, split_words, stem


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("getMemberDeliveryDetail", ["get", "member", "delivery", "detail"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("list_core_v1_namespaced_pod", ["list", "core", "v", "1", "namespaced", "pod"]),
        ("get-an-artists-albums", ["get", "an", "artists", "albums"]),
        ("GET /members/{memberNo}/deliveries", ["get", "members", "member", "no", "deliveries"]),
        ("café délivré", ["café", "délivré"]),
    ],
)
def test_split_words(text: str, words: list[str]) -> None:
    assert split_words(text) == words


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # singular and plural meet: the hand-written stripper split these (movi/movy, cooki/cooky)
        ("movie", "movi"),
        ("movies", "movi"),
        ("cookie", "cooki"),
        ("cookies", "cooki"),
        ("deliveries", "deliveri"),
        ("delivery", "deliveri"),
        ("news", "news"),  # not "new"
        ("created", "creat"),
        ("create", "creat"),
        ("creating", "creat"),
        ("running", "run"),
        ("played", "play"),
        ("playing", "play"),
        ("matches", "match"),
        ("addresses", "address"),
        ("status", "status"),
        ("string", "string"),
        ("need", "need"),
        ("uses", "use"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_terms_drop_stopwords_and_one_letter_words_but_keep_numbers() -> None:
    analyzer = Analyzer()
    assert analyzer.terms("Find the member's deliveries of M 1001 please") == [
        "find",
        "member",
        "deliveri",
        "1001",
    ]
    assert {"the", "of", "please"} <= STOPWORDS


def test_words_keep_stopwords_with_an_empty_term() -> None:
    assert Analyzer().words("Track the parcels") == [("track", "track"), ("the", ""), ("parcels", "parcel")]


def test_the_memo_agrees_with_term() -> None:
    analyzer = Analyzer()
    words = analyzer.split("Delivered deliveries, the Delivery")
    assert [analyzer.term(w) for w in words] == ["deliv", "deliveri", "", "deliveri"]
    assert analyzer.memo["Delivered"] == "deliv"


def test_normalize_name() -> None:
    assert (
        normalize_name("member_no") == normalize_name("memberNo") == normalize_name("Member-No") == "memberno"
    )


def test_the_split_matches_the_plain_pattern_on_ascii_and_unicode_text() -> None:
    """The two word patterns (ASCII and Unicode) are faster rewrites of one plain pattern: they must split the
    same way."""
    import random
    import re

    lower = r"[^\W\d_A-Z]"
    plain = re.compile(rf"[A-Z]+(?=[A-Z]{lower})|[A-Z]?{lower}+|[A-Z]+|[0-9]+")
    rng = random.Random(11)
    alphabet = "aBcDxyzHTTPS01_-./ {}éÉßЖж٣"
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 30))) for _ in range(3000)]
    texts += ["HTTPServerError", "getAnURLForID", "v1beta1PodIP", "ABCdef", "aB", "A", "IDs"]
    assert sum(text.isascii() for text in texts) > 100  # both patterns are exercised
    analyzer = Analyzer()
    for text in texts:
        assert analyzer.split(text) == plain.findall(text), text

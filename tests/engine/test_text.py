"""The analyzer: identifier splitting, stopwords, the suffix stripper, memoization."""

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
        ("deliveries", "delivery"),
        ("delivery", "delivery"),
        ("created", "creat"),
        ("create", "creat"),
        ("creating", "creat"),
        ("running", "run"),
        ("billing", "bill"),
        ("matches", "match"),
        ("addresses", "address"),
        ("status", "status"),
        ("string", "string"),
        ("need", "need"),
        ("speed", "speed"),
        ("use", "use"),
        ("uses", "use"),
        ("free", "free"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_terms_drop_stopwords_and_one_letter_words_but_keep_numbers() -> None:
    analyzer = Analyzer()
    assert analyzer.terms("Find the member's deliveries of M 1001 please") == [
        "find",
        "member",
        "delivery",
        "1001",
    ]
    assert {"the", "of", "please"} <= STOPWORDS


def test_words_keep_stopwords_with_an_empty_term() -> None:
    assert Analyzer().words("Track the parcels") == [("track", "track"), ("the", ""), ("parcels", "parcel")]


def test_terms_of_and_memo_agree_with_term() -> None:
    analyzer = Analyzer()
    words = analyzer.split("Delivered deliveries, the Delivery")
    assert (
        analyzer.terms_of(words)
        == [analyzer.term(w) for w in words]
        == ["deliver", "delivery", "", "delivery"]
    )
    assert analyzer.memo["Delivered"] == "deliver"


def test_normalize_name() -> None:
    assert (
        normalize_name("member_no") == normalize_name("memberNo") == normalize_name("Member-No") == "memberno"
    )

"""The hybrid engine (the semantic extra): exit 2 with the install command without it; with it, a model read
from its package folder with no connection, fused rows whose evidence adds up, document vectors cached."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from qlab.collection.model import Collection
from qlab.contracts.errors import EXIT_INPUT, InputError
from qlab.engine import registry, semantic
from qlab.project.model import EngineConfig

from .helpers import tool

TOOLS = (
    tool("listCars", summary="List the cars in the garage"),
    tool("getWeather", summary="Current weather forecast for a city"),
    tool("deleteCar", summary="Delete a car", method="DELETE"),
)


def test_without_the_extra_a_hybrid_config_is_exit_2_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> Any:
        raise ModuleNotFoundError("No module named 'wordllama'", name="wordllama")

    monkeypatch.setattr(semantic, "_imports", missing)
    with pytest.raises(InputError) as caught:
        registry.make_engine(EngineConfig(type="hybrid"), Collection(TOOLS), base_dir=tmp_path)
    assert "pip install 'qualitylab[semantic]'" in str(caught.value) and "wordllama" in str(caught.value)
    assert caught.value.exit_code == EXIT_INPUT


@pytest.fixture()
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection or name lookup fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"network use: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    pytest.importorskip("wordllama", reason="the semantic extra is not installed")
    return semantic.load()


class Counting:
    """An embedder that counts the texts it embeds."""

    def __init__(self, inner: semantic.Embedder) -> None:
        self.inner, self.name, self.texts = inner, inner.name, 0

    def embed(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)

    def embed_one(self, text: str) -> Any:
        self.texts += 1
        return self.inner.embed_one(text)

    def embed_words(self, words: list[str]) -> Any:
        self.texts += 1
        return self.inner.embed_words(words)


def test_the_model_loads_from_its_package_without_the_network(no_network: None) -> None:
    pytest.importorskip("wordllama", reason="the semantic extra is not installed")
    embedder = semantic.load()
    vectors = embedder.embed(["weather in paris", "forecast for a city"])
    assert vectors.shape == (2, 256)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4  # unit length: a dot product is a cosine
    # the per-query fast paths give the model's own vector
    for fast in (embedder.embed_one("weather in paris"), embedder.embed_words(["weather", "in", "paris"])):
        assert float(fast @ vectors[0]) > 0.9999


def test_fused_rows_show_the_semantic_part_and_add_up(
    tmp_path: Path, embedder: semantic.Embedder, no_network: None
) -> None:
    from qlab.engine.hybrid import SEMANTIC, HybridEngine

    engine = HybridEngine(Collection(TOOLS), embedder=embedder, cache_dir=tmp_path)
    assert engine.name == "hybrid"
    rows = engine.search("show me the cars", k=3).rows
    assert rows[0].tool_id == "listCars"
    for row in rows:
        assert abs(sum(row.field_scores.values()) - row.score) < 1e-9
    assert any(SEMANTIC in row.field_scores for row in rows)
    # no word in common with any tool: the embedding alone finds the forecast
    alone = engine.search("will it rain tomorrow", k=1).rows[0]
    assert alone.tool_id == "getWeather" and set(alone.field_scores) == {SEMANTIC}


def test_document_vectors_are_cached_per_collection(tmp_path: Path, embedder: semantic.Embedder) -> None:
    from qlab.engine.hybrid import HybridEngine

    first = Counting(embedder)
    HybridEngine(Collection(TOOLS, digest="d1"), embedder=first, cache_dir=tmp_path).search("cars", k=1)  # type: ignore[arg-type]
    assert first.texts == len(TOOLS) + 1 and len(list(tmp_path.glob("vectors-*.npy"))) == 1
    second = Counting(embedder)
    HybridEngine(Collection(TOOLS, digest="d1"), embedder=second, cache_dir=tmp_path).search("cars", k=1)  # type: ignore[arg-type]
    assert second.texts == 1  # the query only
    third = Counting(embedder)
    HybridEngine(Collection(TOOLS[:2], digest="d2"), embedder=third, cache_dir=tmp_path).search("cars", k=1)  # type: ignore[arg-type]
    assert third.texts == 3 and len(list(tmp_path.glob("vectors-*.npy"))) == 2
    # kept and stored as float32: half the memory and cache file of float64 (the fusion's arithmetic is float64)
    np = pytest.importorskip("numpy")
    assert {np.load(path).dtype for path in tmp_path.glob("vectors-*.npy")} == {np.dtype(np.float32)}


def test_loading_the_model_leaves_the_process_logging_alone() -> None:
    """wordllama configures the root logger when imported; qlab undoes it (else every library's debug records
    would reach the user's stderr). A fresh interpreter: the import's side effect happens once per process."""
    import subprocess
    import sys

    pytest.importorskip("wordllama", reason="the semantic extra is not installed")
    code = (
        "import logging; from qlab.engine import semantic; semantic.load(); root = logging.getLogger();"
        " print(len(root.handlers), root.level)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", str(30)]  # no handler added, WARNING kept


def test_fusion_ties_at_the_cut_follow_the_lexical_order_then_the_document_number() -> None:
    """Documents tied with the k-th fused score are sorted before the cut, so which of them make the Top-K is
    the documented order (the better lexical rank, then the lower document number), never the partition's."""
    np = pytest.importorskip("numpy", reason="the semantic extra is not installed")
    # eight documents with the same vector (cosine 0.6 with the query), one better (cosine 1)
    query = np.array([1.0, 0.0])
    vectors = np.array([[0.6, 0.8]] * 8 + [[1.0, 0.0]], dtype=np.float32)
    for k in (2, 3, 5):
        chosen = semantic.fuse(vectors, query, (), alpha=0.5, scale=0.0, k=k)
        assert [d for d, _, _ in chosen] == [8, *range(k - 1)]
    # the same tie, with two of the tied documents in the lexical pool at score 0: the pool's order wins
    chosen = semantic.fuse(vectors, query, ((6, 0.0), (4, 0.0)), alpha=0.5, scale=1.0, k=3)
    assert [d for d, _, _ in chosen] == [8, 6, 4]


def test_a_query_vector_is_the_float64_sum_of_its_tokens_rows(embedder: semantic.Embedder) -> None:
    """A query's vector is its tokens' rows summed in float64, whether read word by word (cached token ids)
    or as one text: the same numbers a float64 copy of the table gives, to the last bit."""
    np = pytest.importorskip("numpy", reason="the semantic extra is not installed")
    table = np.asarray(embedder._model.embedding, dtype=np.float64)
    for text in ("list the cars in my garage", "weather forecast paris tomorrow morning", "zzyzx qwerty"):
        ids = embedder._encode(text, add_special_tokens=False).ids
        reference = table[ids].sum(axis=0)
        reference /= np.sqrt(reference @ reference)
        assert np.array_equal(embedder.embed_words(text.split()), reference)
        assert np.array_equal(embedder.embed_one(text), reference)
    assert not embedder.embed_words([]).any()


def _full_fusion(vectors: Any, vector: Any, pool: Any, *, alpha: float, scale: float, k: int) -> list[Any]:
    """The fusion over every document, in numpy (the engine's before it fused candidates only): the reference."""
    import numpy as np

    parts = (vectors @ vector.astype(vectors.dtype)).astype(np.float64) * alpha
    np.maximum(parts, 0.0, out=parts)
    fused = parts.copy()
    for d, score in pool:
        fused[d] += score * scale
    order = {d: i for i, (d, _) in enumerate(pool)}
    ranked = sorted(range(len(fused)), key=lambda d: (-fused[d], order.get(d, len(order)), d))
    return [(d, float(fused[d]), float(parts[d])) for d in ranked[:k] if fused[d] > 0.0]


@pytest.mark.parametrize("n", [7, 199, 700])  # fewer documents than k, the listed cosines, the looked-up ones
def test_fusing_the_candidates_only_gives_the_full_fusion_to_the_bit(n: int) -> None:
    """Only the lexical pool and the documents whose semantic part can still reach the k-th score are fused: the
    same Top-K, scores and parts as fusing every document, with ties (duplicate vectors, equal lexical scores),
    a pool whose k-th score bounds the rest, a pool too short or too weak to, and no pool."""
    np = pytest.importorskip("numpy", reason="the semantic extra is not installed")
    rng = np.random.default_rng(n)
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors[n // 2 :: 5] = vectors[n // 3]  # tied cosines
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for trial in range(60):
        vector = rng.standard_normal(16)
        vector /= np.sqrt(vector @ vector)
        size = (0, 3, 20, 40)[trial % 4]
        docs = rng.choice(n, size=min(size, n), replace=False).tolist()
        scores = sorted(rng.choice([0.0, 1.0, 2.5, 4.0, 7.0], size=len(docs)).tolist(), reverse=True)
        pool = list(zip(docs, scores, strict=True))
        scale = (0.5 / scores[0]) if scores and scores[0] else 0.0
        for k in (1, 5, 10, 50):
            for alpha in (0.5, 0.3, 0.0):
                expected = _full_fusion(vectors, vector, pool, alpha=alpha, scale=scale, k=k)
                assert semantic.fuse(vectors, vector, pool, alpha=alpha, scale=scale, k=k) == expected


def test_a_new_words_tokens_come_from_the_bpe_model_only_when_encode_gives_the_same(
    embedder: semantic.Embedder,
) -> None:
    """A new query word of letters is tokenized by the BPE model alone (no added-token scan, normalizer or
    encoding object): the same ids as ``encode``; a tokenizer set up otherwise (another normalizer, an added
    token of letters) keeps ``encode``."""
    split = semantic._word_splitter(embedder._model.tokenizer)
    assert split is not None
    for word in ("weather", "forecast", "unsubscribing", "zzyzx", "café", "naïve", "s", "bibtex"):
        expected = embedder._encode(word, add_special_tokens=False).ids
        assert [token.id for token in split(semantic._MARK + word)] == expected
        embedder._ids.pop(word, None)
        assert list(embedder.embed_words([word])) == list(embedder.embed_one(word))
    for other in ("</s>", "two words"):  # not letters alone: encode's added tokens and spaces apply
        assert list(embedder.embed_words([other])) == list(embedder.embed_one(other))

    class Added:
        def __init__(self, content: str) -> None:
            self.content = content

    class Other:
        pre_tokenizer = truncation = None
        normalizer = embedder._model.tokenizer.normalizer
        model = embedder._model.tokenizer.model
        added = {0: Added("<unk>")}

        def get_added_tokens_decoder(self) -> dict[int, Added]:
            return self.added

    assert semantic._word_splitter(Other()) is not None
    letters = Other()
    letters.added = {0: Added("<unk>"), 5: Added("\u2581wea")}  # a token a word's normalized text can hold
    assert semantic._word_splitter(letters) is None
    lowercase = Other()
    lowercase.normalizer = "Lowercase()"
    assert semantic._word_splitter(lowercase) is None


class Flat:
    """An embedder that finds every tool equally close to every query: the fused order is the lexical one."""

    name = "flat"

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        return np.full((len(texts), 2), 0.5**0.5, dtype=np.float32)

    def embed_one(self, text: str) -> Any:
        import numpy as np

        return np.array([1.0, 0.0])

    def embed_words(self, words: list[str]) -> Any:
        return self.embed_one(" ".join(words))


def test_the_fused_head_is_reordered_by_the_targets_and_no_row_below_it_enters(tmp_path: Path) -> None:
    """Rule: as in the lexical ranking, the fused ranking's head (here two rows) is re-ordered by the targets the
    query names, their value scaled like the lexical part; the third row, whose target is named too, keeps its
    place and score. Each row's evidence, ``target`` included, adds up to its score."""
    pytest.importorskip("numpy", reason="the semantic extra is not installed")
    import dataclasses

    from qlab.engine.bm25f import DEFAULT_SETTINGS
    from qlab.engine.hybrid import SEMANTIC, HybridEngine

    tools = (
        tool("invoiceStatement", summary="The statement of an invoice", path="/statements"),
        tool("listAll", summary="All invoices of an account", path="/invoices"),
        tool("fetchOne", summary="One of them", path="/invoices/{id}"),
        tool("listCarriers"),
    )

    def search(**settings: Any) -> Any:
        engine = HybridEngine(Collection(tools), embedder=Flat(), cache_dir=tmp_path)  # type: ignore[arg-type]
        engine.settings = dataclasses.replace(DEFAULT_SETTINGS, **settings)
        return engine.search("invoice", k=3).rows

    plain = search(target_weight=0.0)
    assert [r.tool_id for r in plain] == ["invoiceStatement", "listAll", "fetchOne"]
    rows = search(target_weight=5.0, target_head=2)
    assert [r.tool_id for r in rows] == ["listAll", "invoiceStatement", "fetchOne"]
    assert rows[0].field_scores["target"] > 0 and "target" not in rows[1].field_scores
    assert rows[2].score == plain[2].score and "target" not in rows[2].field_scores
    for row in rows:
        assert SEMANTIC in row.field_scores
        assert abs(sum(row.field_scores.values()) - row.score) < 1e-9

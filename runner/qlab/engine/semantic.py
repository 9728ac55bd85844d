"""Sentence embeddings for the hybrid search, behind one module: WordLlama and numpy (the
``qualitylab[semantic]`` extra), with the fusion arithmetic (``fuse``), so numpy is used here alone.

WordLlama is a static embedding model: a float16 token embedding table averaged over a text's tokens. Its
weights and tokenizer ship inside its wheel and are read from the installed package folder only:
``WordLlama.load`` is not called (it could fetch from the Hugging Face hub), the hub is switched off
(``HF_HUB_OFFLINE``) before anything of it is imported, and a missing file is an error, never a download.
Nothing here opens a connection.

Document vectors are kept in float32 and cached next to the collection's build cache, keyed by the model and
the collection digest, so a second run over the same collection embeds only its queries. A query's vector is
float64 (its tokens' rows summed exactly); only the product with the documents is float32.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from math import sqrt
from pathlib import Path
from typing import Any

from qlab.contracts.errors import InputError

INSTALL = "pip install 'qualitylab[semantic]'"
MODEL = "wordllama-l2_supercat-256"


class Embedder:
    """Texts -> unit-length vectors, one row per text (documents float32, a query float64: see ``fuse``)."""

    def __init__(self, model: Any, *, name: str) -> None:
        import numpy as np

        self._model = model
        self.name = name
        tokenizer = model.tokenizer
        self._encode = tokenizer.encode
        self._split = _word_splitter(tokenizer)
        # the token table as the model holds it (float32 rows whose values are the weights' float16 numbers):
        # a query's tokens are gathered and summed in float64, where such sums are exact in any order
        self._table = np.asarray(model.embedding)
        self._ids: dict[str, list[int]] = {}  # word -> its token ids
        self._float64 = np.float64
        self._sum = np.add.reduce
        self._zero = np.zeros(self._table.shape[1], dtype=np.float64)

    def embed(self, texts: Sequence[str]) -> Any:
        """Many texts (a collection's documents), in the model's own batches, as float32 (how documents are
        kept and compared: see ``fuse``)."""
        import numpy as np

        return np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float32)

    def embed_words(self, words: Sequence[str]) -> Any:
        """The vector of ``" ".join(words)`` (lowercase words without spaces): the tokenizer splits on spaces
        first, so a text's tokens are its words' tokens, and each word's token ids are cached. One
        gather-and-sum over the query's tokens: the table's values are float16 numbers, whose float64 sums are
        exact in any order, so this is the same vector as ``embed_one`` of the joined text."""
        cached = self._ids
        ids: list[int] = []
        for word in words:
            found = cached.get(word)
            if found is None:
                if len(cached) > 100_000:
                    cached.clear()
                split = self._split
                if split is not None and word.isalpha():
                    found = [token.id for token in split(_MARK + word)]
                else:
                    found = self._encode(word, add_special_tokens=False).ids
                cached[word] = found
            ids += found
        return self._unit(ids)

    def embed_one(self, text: str) -> Any:
        """One text (a query): the same vector as ``embed`` (the mean of its tokens' rows, unit length),
        without the batch padding."""
        return self._unit(self._encode(text, add_special_tokens=False).ids)

    def _unit(self, ids: list[int]) -> Any:
        """The sum of the tokens' rows at unit length (a zero vector without tokens)."""
        if not ids:
            return self._zero.copy()
        # ``take`` and the reduction itself: the same float64 sum as ``table[ids].sum(axis=0, dtype=float64)``
        # (the same rows added in the same order), without fancy indexing's and ``sum``'s Python-level layers
        vector = self._sum(self._table.take(ids, axis=0), axis=0, dtype=self._float64)
        length = sqrt(vector @ vector)  # numpy.linalg.norm's own formula, without its per-call overhead
        return vector / length if length else vector


# SentencePiece's word mark, which the tokenizer's normalizer puts before a text and for each space
_MARK = "\u2581"
# The normalizer of the tokenizer WordLlama ships (what ``_word_splitter`` requires, as tokenizers prints it)
_NORMALIZER = (
    f'Sequence(normalizers=[Prepend(prepend="{_MARK}"), Replace(pattern=String(" "), content="{_MARK}")])'
)


def _apart(token: Any) -> bool:
    """Whether an added token has a character that is neither a letter nor the word mark: then it can occur
    neither in a word of letters nor in the normalized text of one."""
    return any(not (c.isalpha() or c == _MARK) for c in token.content)


def _word_splitter(tokenizer: Any) -> Any:
    """The tokenizer's BPE model alone (``model.tokenize``), when it gives a word of letters the same tokens as
    ``encode(word, add_special_tokens=False)`` does, else None. ``encode`` first takes the added tokens (here
    ``<unk>``, ``<s>``, ``</s>``) out of the raw text, normalizes (the word mark before the text and for each
    space), pre-tokenizes (nothing here) and truncates (off), then runs the model on what is left: for a word
    of letters, when every added token has a character no such text has, that is the model on the mark and the
    word, giving the same ids with less work: a word's first sight is most of what tokenizing a query costs,
    the ids of the words seen before being cached."""
    try:
        plain = (
            tokenizer.pre_tokenizer is None
            and tokenizer.truncation is None
            and str(tokenizer.normalizer) == _NORMALIZER
            and all(map(_apart, tokenizer.get_added_tokens_decoder().values()))
        )
    except (AttributeError, TypeError):  # another tokenizers version: encode it is
        return None
    return tokenizer.model.tokenize if plain else None


def fuse(
    vectors: Any, vector: Any, pool: Sequence[tuple[int, float]], *, alpha: float, scale: float, k: int
) -> list[tuple[int, float, float]]:
    """The ``k`` best documents by ``alpha * max(0, cosine) + scale * lexical score`` (``pool``: the lexical
    candidates, (document, score) best first; any other document scores 0 lexically), as (document, fused
    score, semantic part), best first: ties go to the better lexical rank, then the lower document number
    (every document tied with the k-th score is sorted, so which of them make the cut follows that rule).
    Documents scoring 0 are left out.

    Every document's cosine is computed (one float32 matrix-vector product), but only the pool and the other
    documents that could still reach the Top-K are fused, in Python floats: the same float64 operations, in the
    same order, as fusing every document in numpy. Outside the pool a document's fused score is its semantic
    part alone, so it needs a part of at least the k-th best fused score of the pool (k documents have that
    much) — or, when the pool has fewer than k documents scoring above 0, a cosine among the k best (the k
    documents of the best cosines each score strictly more than one below: ``alpha`` times a larger float32
    cosine is a larger float64, and a lexical score adds nothing negative). Anything else is out of the Top-K or
    scores 0, and documents scoring 0 are left out anyway. On 199 tools: half the numpy calls of the full
    fusion, each costing a microsecond or more whatever its size."""
    import numpy as np

    n = len(vectors)
    if k <= 0 or not n:
        return []
    # float32 products (the documents are stored so): half the memory traffic of float64, which is what a
    # matrix-vector product over a thousand tools costs; the fusion's arithmetic is float64
    cosines = np.dot(vectors, vector.astype(vectors.dtype, copy=False))  # BLAS sgemv, as ``@`` calls it
    values = cosines.tolist() if n <= _LISTED else None
    docs = [d for d, _ in pool]
    if values is not None:
        found = list(map(values.__getitem__, docs))
    else:
        found = cosines[docs].tolist() if docs else []
    parts: list[float] = []  # the candidates' semantic parts and fused scores: the pool first, in its order
    fused: list[float] = []
    for cosine, (_, score) in zip(found, pool, strict=True):
        # alpha * max(0, cosine): the same float as max(0, cosine) * alpha for alpha >= 0
        part = cosine * alpha
        if part < 0.0:
            part = 0.0
        parts.append(part)
        fused.append(part + score * scale)
    if k >= n or not alpha > 0.0:  # every document (a small collection, or no semantic part to bound by)
        near: Sequence[int] = range(n)
    else:
        bar = sorted(fused)[-k] if len(fused) >= k else 0.0  # the pool's k-th best fused score
        if bar > _TINY:
            # a part of at least bar: a cosine of at least bar / alpha, compared in float32 (a margin far above
            # float32's and the division's rounding keeps every such document in)
            near = (cosines >= bar / alpha * (1.0 - 1e-6)).nonzero()[0].tolist()
        else:
            near = (cosines >= np.partition(cosines, n - k)[n - k]).nonzero()[0].tolist()
    last = len(docs)
    if last:
        inside = set(docs)
        near = [d for d in near if d not in inside]
    if near:
        for cosine in map(values.__getitem__, near) if values is not None else cosines[near].tolist():
            part = cosine * alpha
            if part < 0.0:
                part = 0.0
            parts.append(part)
            fused.append(part)
        docs += near
    # the k-th best fused score and any tied with it, sorted by score, then lexical rank, then document number
    cut = sorted(fused)[-k] if len(fused) > k else 0.0
    keyed = [
        (-score, i if i < last else last, docs[i], parts[i])
        for i, score in enumerate(fused)
        if score >= cut and score > 0.0
    ]
    keyed.sort()  # the document numbers are unique: the parts are never compared
    return [(d, -negated, part) for negated, _, d, part in keyed[:k]]


_LISTED = 512  # up to this many documents, all cosines become Python floats in one call (else the few needed)
_TINY = 1e-30  # a k-th fused score of the pool below this bounds nothing in float32: the k best cosines do


def _imports() -> tuple[Any, Any, Any, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the hub, whatever a library would try
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import numpy
        import wordllama
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
    finally:
        # wordllama calls logging.basicConfig(level=INFO) when imported: a library must not configure the
        # process's logging (every other library's debug records would reach stderr), so it is undone
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return numpy, wordllama, Tokenizer, WordLlamaInference


def load(model: str = MODEL) -> Embedder:
    """The embedding model, read from its installed package folder (no download, no network).

    Raises InputError (exit 2) with the install command when the extra is not installed.
    """
    try:
        numpy, wordllama, tokenizer_class, inference = _imports()
        from safetensors import safe_open
    except ImportError as exc:
        raise InputError(
            f"engine.type: hybrid needs the semantic extra ({exc.name or exc} is not installed): run `{INSTALL}`"
        ) from None
    if model != MODEL:
        raise InputError(f"semantic model {model!r} is not known; the hybrid engine uses {MODEL!r}")
    root = Path(wordllama.__file__).parent
    weights = root / "weights" / "l2_supercat_256.safetensors"
    tokenizer = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
    for path in (weights, tokenizer):
        if not path.is_file():
            raise InputError(f"{path}: the WordLlama package has no such file (reinstall it: `{INSTALL}`)")
    with safe_open(str(weights), framework="np", device="cpu") as handle:
        table = handle.get_tensor("embedding.weight")
    engine = inference(numpy.asarray(table), tokenizer_class.from_file(str(tokenizer)), binary=False)
    return Embedder(engine, name=model)


def cached_vectors(embedder: Embedder, texts: Sequence[str], *, cache_dir: Path | None, key: str) -> Any:
    """The vectors of ``texts`` (documents), read from ``cache_dir`` when an earlier run stored them for the
    same model and key (the collection digest), else embedded and stored there (atomically)."""
    import numpy as np

    digest = hashlib.sha256("\x00".join([embedder.name, key, *texts]).encode("utf-8")).hexdigest()[:24]
    path = cache_dir / f"vectors-{digest}.npy" if cache_dir is not None else None
    if path is not None and path.is_file():
        try:
            found = np.load(path, allow_pickle=False)
            if found.shape[0] == len(texts):
                return np.asarray(found, dtype=np.float32)
        except (OSError, ValueError):
            pass  # a damaged cache file: embed again
    vectors = embedder.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            with partial.open("wb") as handle:
                np.save(handle, vectors, allow_pickle=False)
            partial.replace(path)
        except OSError:
            pass  # a read-only folder: the vectors are used without a cache
    return vectors

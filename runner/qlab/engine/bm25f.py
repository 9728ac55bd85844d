"""BM25F postings for the built-in search: the ranking model of a collection.

Each tool is a document with seven fields (``FIELDS``). For a term ``t`` and a tool ``d`` the fields' term
frequencies are length-normalized per field and summed with the field weights (BM25F; Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009, section 3.7)::

    tf~(t, d)    = sum over fields f of  w_f * tf_f(t, d) / ((1 - b_f) + b_f * len_f(d) / avglen_f)
    score(t, d)  = idf(t) * tf~ * (k1 + 1) / (k1 + tf~)
    idf(t)       = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

``avglen_f`` is the mean length of field ``f`` over the tools that have it, so a field most tools lack
(aliases) is not over-normalized. ``score(t, d)`` does not depend on the query: a term's postings (documents,
scores, and each score's split over the fields for the evidence) are computed once, the first time a query
uses the term, and kept. A query is then a sum over its terms' postings.

Building reads each distinct text once: API specs repeat texts (the same parameter description on hundreds of
operations), so the model keeps every distinct text's term counts and where it occurs (document, field), and a
term's postings are gathered from the texts that contain it. Nothing is computed for terms no query uses.

Two term spaces share the postings: stems (``deliver``) and exact surface words (``=delivered``). A query word
scores its stem plus ``exact_weight`` times its exact word, so "followed" prefers the tool that says
"followed" over the one that says "follow" while both still match. A stem written one way only in the whole
collection needs no exact posting: its exact score would equal its stem score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import log

from qlab.collection.model import Tool
from qlab.engine.text import Analyzer

FIELDS: tuple[str, ...] = ("id", "summary", "description", "params", "tags", "aliases", "path")
PARAMS = FIELDS.index("params")
EXACT = "="  # prefix of exact-word terms; stems never start with it


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """A field's BM25F weight and length-normalization strength ``b`` (0: none, 1: full)."""

    weight: float
    b: float


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """The ranking's knobs: generic IR choices, the same for every collection."""

    fields: Mapping[str, FieldSpec]
    k1: float = 1.2
    exact_weight: float = 0.5  # an exact surface-word match adds this much of a stem match
    correction_weight: float = 0.7  # a fuzzily rescued query word counts this much of a typed one


DEFAULT_SETTINGS = SearchSettings(
    fields={
        "id": FieldSpec(3.0, 0.2),
        "summary": FieldSpec(2.0, 0.5),
        "description": FieldSpec(0.5, 0.3),
        "params": FieldSpec(0.4, 0.75),
        "tags": FieldSpec(1.0, 0.5),
        "aliases": FieldSpec(3.0, 0.5),
        "path": FieldSpec(1.0, 0.5),
    }
)


def field_texts(tool: Tool) -> tuple[tuple[str, ...], ...]:
    """The texts of each of ``FIELDS`` for ``tool``, in order; the params field has one text per parameter."""
    ident = tool.id if tool.name in ("", tool.id) else f"{tool.id} {tool.name}"
    tags = list(tool.tags)
    if tool.family and tool.family not in tags:
        tags.append(tool.family)
    return (
        (ident,),
        (tool.summary,),
        (tool.description,),
        tuple(f"{p.name} {p.description}" for p in tool.parameters),
        (" ".join(tags),),
        tuple(tool.aliases),
        (f"{tool.method or ''} {tool.path or ''}",),
    )


Posting = tuple[tuple[int, ...], tuple[float, ...]]  # (documents ascending, their scores)


class Model:
    """A collection's BM25F model. Documents are numbered in the order of ``tools``."""

    def __init__(self, tools: Sequence[Tool], analyzer: Analyzer, settings: SearchSettings) -> None:
        self.settings = settings
        self.analyzer = analyzer
        self.n_docs = len(tools)
        self._stems: list[Counter[str]] = []  # text id -> stem counts
        self._words: list[Counter[str]] = []  # text id -> exact-word counts (lowercase, stopwords out)
        self._length: list[int] = []  # text id -> number of terms
        self._stem_texts: dict[str, list[int]] = {}  # stem -> ids of the texts that have it
        self._doc_texts: list[list[tuple[int, int]]] = []  # document -> [(text id, field), ...]
        self._cache: dict[str, tuple[Posting, dict[int, float]] | None] = {}
        self._shares: dict[str, dict[int, tuple[tuple[str, float], ...]]] = {}  # term -> document -> shares
        self._forms: dict[str, frozenset[str]] = {}  # stem -> its surface words (see _index_words)
        self._surface: Counter[str] | None = None
        ids: dict[str, int] = {}
        lengths: list[list[int]] = []
        for tool in tools:
            doc_lengths = [0] * len(FIELDS)
            doc_texts = []
            for f, texts in enumerate(field_texts(tool)):
                for text in texts:
                    tid = ids.get(text)
                    if tid is None:
                        tid = ids[text] = self._add_text(text)
                    if self._length[tid]:
                        doc_texts.append((tid, f))
                        doc_lengths[f] += self._length[tid]
            lengths.append(doc_lengths)
            self._doc_texts.append(doc_texts)
        # per document and field: w_f / ((1 - b_f) + b_f * len_f(d) / avglen_f)
        specs = [settings.fields[name] for name in FIELDS]
        avg = []
        for f in range(len(FIELDS)):
            present = [doc[f] for doc in lengths if doc[f]]
            avg.append(sum(present) / len(present) if present else 1.0)
        self._norm = [
            [
                spec.weight / ((1.0 - spec.b) + spec.b * doc[f] / avg[f]) if doc[f] else 0.0
                for f, spec in enumerate(specs)
            ]
            for doc in lengths
        ]
        # text id -> [(document, norm), ...]: where a text occurs, with the norm of its field there
        self._occurs: list[list[tuple[int, float]]] = [[] for _ in self._stems]
        for d, doc_texts in enumerate(self._doc_texts):
            norms = self._norm[d]
            for tid, f in doc_texts:
                if norms[f]:
                    self._occurs[tid].append((d, norms[f]))

    def _add_text(self, text: str) -> int:
        # Counting runs in C (Counter); Python loops only over the text's distinct terms.
        tid = len(self._stems)
        raw = self.analyzer.split(text)
        terms = self.analyzer.terms_of(raw)
        stems = Counter(terms)
        stems.pop("", None)
        words = Counter(map(str.lower, raw))
        for word in [word for word in words if not self.analyzer.term(word)]:
            del words[word]
        for term in stems:
            self._stem_texts.setdefault(term, []).append(tid)
        self._stems.append(stems)
        self._words.append(words)
        self._length.append(sum(stems.values()))
        return tid

    def has(self, term: str) -> bool:
        """Whether ``term`` (a stem, or ``=word``) occurs in the collection."""
        if term.startswith(EXACT):
            return term[1:] in self.forms(self.analyzer.term(term[1:]))
        return term in self._stem_texts

    def forms(self, stem: str) -> frozenset[str]:
        """The lowercase surface words the collection writes ``stem`` as."""
        if self._surface is None:
            self._index_words()
        return self._forms.get(stem, frozenset())

    def surface(self) -> dict[str, int]:
        """Lowercase surface word -> number of distinct texts using it: the speller's vocabulary."""
        if self._surface is None:
            self._index_words()
        return dict(self._surface or {})

    def _index_words(self) -> None:
        # one pass over the distinct (text, word) pairs, the first time a query needs it
        surface: Counter[str] = Counter()
        for words in self._words:
            surface.update(words.keys())
        forms: dict[str, set[str]] = {}
        term_of = self.analyzer.term
        for word in surface:
            forms.setdefault(term_of(word), set()).add(word)
        self._forms = {stem: frozenset(words) for stem, words in forms.items()}
        self._surface = surface

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(self._stem_texts)

    def posting(self, term: str) -> tuple[Posting, dict[int, float]] | None:
        """The postings of ``term`` and the same as a document -> score map; None when no tool has it."""
        if term in self._cache:
            return self._cache[term]
        if term.startswith(EXACT):
            key, table = term[1:], self._words
            texts = [tid for tid in self._stem_texts.get(self.analyzer.term(key), ()) if key in table[tid]]
        else:
            key, table = term, self._stems
            texts = self._stem_texts.get(term, [])
        built = None
        if texts:
            tf: dict[int, float] = {}  # document -> tf~
            occurs = self._occurs
            for tid in texts:
                count = table[tid][key]
                for d, norm in occurs[tid]:
                    tf[d] = tf.get(d, 0.0) + count * norm
            if tf:
                k1 = self.settings.k1
                idf = log(1.0 + (self.n_docs - len(tf) + 0.5) / (len(tf) + 0.5))
                docs = sorted(tf)
                scores = [idf * (k1 + 1.0) * t / (k1 + t) for t in map(tf.__getitem__, docs)]
                built = (tuple(docs), tuple(scores)), dict(zip(docs, scores, strict=True))
        self._cache[term] = built
        return built

    def shares(self, term: str, d: int) -> tuple[tuple[str, float], ...]:
        """How ``term``'s score in document ``d`` splits over the fields: (field, share), shares sum to 1.

        The weighted, normalized tf of each field over their sum: BM25F saturates the sum, so each field's part
        of the score is proportional to its part of tf~. Computed for the rows that make a Top-K, and kept.
        """
        cached = self._shares.get(term)
        if cached is None:
            cached = self._shares[term] = {}
        else:
            found = cached.get(d)
            if found is not None:
                return found
        key, table = (term[1:], self._words) if term.startswith(EXACT) else (term, self._stems)
        norms = self._norm[d]
        split: dict[int, float] = {}
        for tid, f in self._doc_texts[d]:
            count = table[tid].get(key)
            if count and norms[f]:
                split[f] = split.get(f, 0.0) + count * norms[f]
        total = sum(split.values())
        out = cached[d] = tuple((FIELDS[f], value / total) for f, value in split.items())
        return out

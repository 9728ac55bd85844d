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
collection needs no exact posting: its exact score would equal its stem score (``sole_form``).
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


Part = str | tuple[str, ...]  # a piece of text: a string, or strings read as if joined by spaces
TextKey = Part | tuple[Part, ...]  # one text of a field, made of parts


def field_keys(tool: Tool) -> list[tuple[int, TextKey]]:
    """(field index, text) pairs of ``tool``; the params field has one text per parameter (name, description).

    Texts are keyed by the spec's own strings (tuples of them, not new joined strings): hashes are cached, so
    the same parameter on a thousand operations is found at once and analyzed once.
    """
    tags = tool.tags if not tool.family or tool.family in tool.tags else (*tool.tags, tool.family)
    keys: list[tuple[int, TextKey]] = [(0, tool.id if tool.name in ("", tool.id) else (tool.id, tool.name))]
    if tool.summary:
        keys.append((1, tool.summary))
    if tool.description:
        keys.append((2, tool.description))
    keys += [(3, (p.name, p.description)) for p in tool.parameters]
    if tags:
        keys.append((4, tuple(tags)))
    keys += [(5, alias) for alias in tool.aliases]
    keys.append((6, (tool.method or "", tool.path or "")))
    return keys


def _parts(key: TextKey) -> tuple[Part, ...]:
    if isinstance(key, str):
        return (key,)
    if any(isinstance(item, tuple) for item in key):
        return tuple(key)
    return (key,)  # type: ignore[return-value]  # a tuple of strings is one part


def _joined(part: Part) -> str:
    return part if isinstance(part, str) else " ".join(part)


def field_texts(tool: Tool) -> tuple[tuple[str, ...], ...]:
    """The texts of each of ``FIELDS`` for ``tool``, in order (what the index analyzes), one per part."""
    out: list[list[str]] = [[] for _ in FIELDS]
    for f, key in field_keys(tool):
        out[f] += [_joined(part) for part in _parts(key)]
    return tuple(tuple(texts) for texts in out)


Posting = tuple[tuple[int, ...], tuple[float, ...]]  # (documents ascending, their scores)


class Model:
    """A collection's BM25F model. Documents are numbered in the order of ``tools``."""

    def __init__(self, tools: Sequence[Tool], analyzer: Analyzer, settings: SearchSettings) -> None:
        self.settings = settings
        self.analyzer = analyzer
        self.n_docs = len(tools)
        # per distinct text: its lowercase surface words, their terms ('' for a stopword), its length in terms
        self._lowered: list[list[str]] = []
        self._terms: list[list[str]] = []
        self._length: list[int] = []
        self._stem_texts: dict[str, list[int]] = {}  # stem -> ids of the texts that have it
        self._doc_texts: list[list[tuple[int, int]]] = []  # document -> [(text id, field), ...]
        self._cache: dict[str, tuple[Posting, dict[int, float]] | None] = {}
        self._shares: dict[str, dict[int, tuple[tuple[str, float], ...]]] = {}  # term -> document -> shares
        self._sole: dict[tuple[str, str], bool | None] = {}
        self._texts: dict[str, list[tuple[int, int]]] = {}  # term -> [(text id, count)]
        self._surface: dict[str, int] | None = None
        self._part_memo: dict[Part, tuple[list[str], list[str]]] = {}
        ids: dict[TextKey, int] = {}
        lengths: list[list[int]] = []
        text_length = self._length
        for tool in tools:
            doc_lengths = [0] * len(FIELDS)
            doc_texts = []
            for f, key in field_keys(tool):
                tid = ids.get(key)
                if tid is None:
                    tid = ids[key] = self._add_text(_parts(key))
                n = text_length[tid]
                if n:
                    doc_texts.append((tid, f))
                    doc_lengths[f] += n
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
        # text id -> {document: norm}: where a text occurs, with the norm of its field there (summed when a
        # document has the same text in two fields: a term's tf~ is linear in it)
        self._occurs: list[dict[int, float]] = [{} for _ in self._terms]
        for d, doc_texts in enumerate(self._doc_texts):
            norms = self._norm[d]
            for tid, f in doc_texts:
                norm = norms[f]
                if norm:
                    occurs = self._occurs[tid]
                    occurs[d] = occurs.get(d, 0.0) + norm

    def _analyze(self, part: Part) -> tuple[list[str], list[str]]:
        """(lowercase words, terms) of one part, memoized: parts repeat across texts."""
        found = self._part_memo.get(part)
        if found is None:
            raw = self.analyzer.split(_joined(part))
            found = self._part_memo[part] = (list(map(str.lower, raw)), self.analyzer.terms_of(raw))
        return found

    def _add_text(self, parts: tuple[Part, ...]) -> int:
        # The per-word work runs in C (regex, map, set, list.count); Python loops only over distinct stems,
        # and counts are taken later, for the stems a query uses.
        tid = len(self._terms)
        if len(parts) == 1:
            lowered, terms = self._analyze(parts[0])
        else:
            lowered, terms = [], []
            for part in parts:
                part_lowered, part_terms = self._analyze(part)
                lowered += part_lowered
                terms += part_terms
        stem_texts = self._stem_texts
        for term in set(terms):
            if term:
                found = stem_texts.get(term)
                if found is None:
                    stem_texts[term] = [tid]
                else:
                    found.append(tid)
        self._lowered.append(lowered)
        self._terms.append(terms)
        self._length.append(len(terms) - terms.count(""))
        return tid

    def has(self, stem: str) -> bool:
        """Whether some tool has ``stem``."""
        return stem in self._stem_texts

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(self._stem_texts)

    def surface(self) -> dict[str, int]:
        """Lowercase surface word (stopwords left out) -> occurrences in distinct parts: the speller's
        vocabulary."""
        if self._surface is None:
            counts: Counter[str] = Counter()
            for lowered, _ in self._part_memo.values():
                counts.update(lowered)
            term_of = self.analyzer.term
            self._surface = {word: n for word, n in counts.items() if term_of(word)}
        return self._surface

    def sole_form(self, stem: str, word: str) -> bool | None:
        """How the lowercase ``word`` stands to its ``stem`` in the collection: True when it is the stem's only
        written form (its exact posting would equal the stem's), False when other forms occur too, None when the
        collection never writes it."""
        key = (stem, word)
        if key not in self._sole:
            found = False
            sole = True
            for tid in self._stem_texts.get(stem, ()):
                exact = self._lowered[tid].count(word)
                found = found or exact > 0
                sole = sole and exact == self._terms[tid].count(stem)
            self._sole[key] = sole if found else None
        return self._sole[key]

    def texts_of(self, term: str) -> list[tuple[int, int]]:
        """(text id, count) of every text that has ``term`` (a stem or ``=word``)."""
        found = self._texts.get(term)
        if found is None:
            if term.startswith(EXACT):
                word, lowered = term[1:], self._lowered
                pairs = [
                    (tid, lowered[tid].count(word))
                    for tid in self._stem_texts.get(self.analyzer.term(word), ())
                ]
            else:
                terms = self._terms
                pairs = [(tid, terms[tid].count(term)) for tid in self._stem_texts.get(term, ())]
            found = self._texts[term] = [(tid, n) for tid, n in pairs if n]
        return found

    def posting(self, term: str) -> tuple[Posting, dict[int, float]] | None:
        """The postings of ``term`` (a stem or ``=word``) and the same as a document -> score map; None when no
        tool has it."""
        if term in self._cache:
            return self._cache[term]
        counts = self.texts_of(term)
        # tf~ per document: dict updates do the work in C; only documents reached through two texts are added
        # up in Python (a text shared by hundreds of operations costs one update)
        tf: dict[int, float] = {}
        occurs = self._occurs
        for tid, count in counts:
            if not count:
                continue
            occ = occurs[tid]
            if count != 1:
                occ = dict(zip(occ, map(float(count).__mul__, occ.values()), strict=True))
            common = tf.keys() & occ.keys()
            if common:
                before = [(d, tf[d]) for d in common]
                tf.update(occ)
                for d, value in before:
                    tf[d] += value
            else:
                tf.update(occ)
        built = None
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
        norms = self._norm[d]
        exact = term.startswith(EXACT)
        split: dict[int, float] = {}
        for tid, f in self._doc_texts[d]:
            count = self._lowered[tid].count(term[1:]) if exact else self._terms[tid].count(term)
            if count and norms[f]:
                split[f] = split.get(f, 0.0) + count * norms[f]
        total = sum(split.values()) or 1.0
        out = cached[d] = tuple((FIELDS[f], value / total) for f, value in split.items())
        return out

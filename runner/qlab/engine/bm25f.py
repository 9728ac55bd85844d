"""BM25F postings for the built-in search: the ranking model of a collection.

Each tool is a document with nine fields (``FIELDS``); ``values`` (enum values, examples) and ``body`` (a request
body's properties) weigh little. A term's score in a tool is BM25F (Robertson & Zaragoza, 2009, section 3.7):
the fields' length-normalized term frequencies summed with their weights, then idf(t) * tf~ * (k1 + 1) /
(k1 + tf~). It does not depend on the query, so a term's postings (documents, scores, each score's split over the
fields) are computed the first time a query uses the term, and kept; building reads each distinct string once.

Text many tools share counts less: a string of ``SHARED_FIELDS`` counts ``string_weight`` of the number of places
that hold it, so the text that tells operations apart decides. Stems (``deliver``) and exact words
(``=delivered``) share the postings: a query word scores its stem plus ``exact_weight`` times its exact word.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, filterfalse, repeat
from math import log
from typing import TypeVar

from qlab.collection.model import Tool
from qlab.engine.text import Analyzer, stems

FIELDS: tuple[str, ...] = (
    "id", "summary", "description", "params", "tags", "aliases", "path", "values", "body"
)  # fmt: skip
_SHIFT, _SLOTS, _MASK = 4, 16, 15  # a place is document * 16 + field: room for 16 fields
_WHOLE: tuple[tuple[tuple[str, float], ...], ...] = tuple(
    ((name, 1.0),) for name in FIELDS
)  # per field: the shares of a term found in it alone
K = TypeVar("K")
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
    value_weight: float = 0.5  # a number of the query (an id, an amount) counts this much of a word
    # how hard text many tools share is discounted (``string_weight``; 0: not at all)
    shared_discount: float = 1.0
    # how the best ``target_head`` rows are re-ordered among themselves when the request names what they act on
    # (``qlab.engine.index``): a named target adds this times ln(1 + N), times the share of the target named,
    # times the row's score over the best score (0, or a head of 0 rows: the words' ranking as it is); a head of
    # five leaves which tools make a Top-5 to the words: the targets only order them
    target_weight: float = 0.5
    target_head: int = 5


# The fields whose strings count less the more tools share them (``string_weight``): descriptions, parameters,
# enum values and body properties, where specs repeat boilerplate. Names, summaries, tags, aliases and paths are
# what tells operations apart and always count whole.
SHARED_FIELDS = frozenset(("description", "params", "values", "body"))


def idf(df: int, n: int) -> float:
    """The idf of a term ``df`` of ``n`` documents have: ln(1 + (n - df + 0.5) / (df + 0.5))."""
    return log(1.0 + (n - df + 0.5) / (df + 0.5))


def string_weight(places: int, n: int, discount: float) -> float:
    """What each occurrence of a string counts in a shared field, when the shared fields of the collection's ``n``
    tools hold it ``places`` times: its own idf (``places`` taken as its document frequency, at most ``n``) over
    the most a string can have (one place), to the power ``discount``. A string one tool has counts whole; one on
    most tools ("If 'true', then the output is pretty printed") counts next to nothing, so the words that tell
    tools apart decide the ranking."""
    if discount <= 0.0 or places <= 1:
        return 1.0
    return float((idf(min(places, n), n) / idf(1, n)) ** discount)


# The field weights and b: a change is kept only when no benchmark set (bench/bench_search.py) drops by more than
# one query.
DEFAULT_SETTINGS = SearchSettings(
    fields={
        "id": FieldSpec(3.0, 0.2),
        "summary": FieldSpec(2.0, 0.5),
        "description": FieldSpec(0.5, 0.3),
        "params": FieldSpec(0.4, 0.75),
        "tags": FieldSpec(1.0, 0.5),
        "aliases": FieldSpec(3.0, 0.5),
        "path": FieldSpec(1.0, 0.5),
        "values": FieldSpec(0.2, 0.5),
        "body": FieldSpec(0.15, 0.75),
    }
)


def field_strings(tool: Tool) -> tuple[tuple[str, ...], ...]:
    """The strings of each of ``FIELDS`` for ``tool``, in order: the id and the name (when it differs), the
    summary, the description, each parameter's name and description, the tags and the family, each alias, the
    method and the path. A field's text is its strings read as if joined by spaces.

    The index keeps the spec's own string objects (their hashes are cached): the same parameter description on
    a thousand operations is found at once and analyzed once.
    """
    params = tool.parameters
    return (
        (tool.id,) if tool.name in ("", tool.id) else (tool.id, tool.name),
        (tool.summary,) if tool.summary else (),
        (tool.description,) if tool.description else (),
        tuple(
            [p.name for p in params if p.location != "body"]
            + [p.description for p in params if p.description and p.location != "body"]
        ),
        tool.tags if not tool.family or tool.family in tool.tags else (*tool.tags, tool.family),
        tool.aliases,
        (tool.method or "", tool.path or ""),
        _values(tool),
        tuple(
            [p.name for p in params if p.location == "body"]
            + [p.description for p in params if p.description and p.location == "body"]
        ),
    )


def _values(tool: Tool) -> tuple[str, ...]:
    """The string enum values and examples of ``tool``'s parameters (and its recorded examples), each once."""
    out: dict[str, None] = {}
    for p in tool.parameters:
        schema = p.schema
        if not schema:
            continue
        for key in ("enum", "examples"):
            found = schema.get(key)
            if isinstance(found, list):
                out.update((v, None) for v in found if isinstance(v, str) and v)
        example = schema.get("example")
        if isinstance(example, str) and example:
            out[example] = None
        items = schema.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("enum"), list):
            out.update((v, None) for v in items["enum"] if isinstance(v, str) and v)
    for value in tool.examples.values():
        if isinstance(value, str) and value:
            out[value] = None
    return tuple(out)


def _inverted(lists: Sequence[Sequence[K]]) -> dict[K, tuple[int, ...]]:
    """key -> the positions in ``lists`` of the lists that have it, once per occurrence, ascending. The loop over
    every occurrence runs in C."""
    index: defaultdict[K, list[int]] = defaultdict(list)
    positions = chain.from_iterable(map(repeat, range(len(lists)), map(len, lists)))
    deque(map(list.append, map(index.__getitem__, chain.from_iterable(lists)), positions), maxlen=0)
    return dict(zip(index, map(tuple, index.values()), strict=True))


class _Build:
    """What building a Model needs and drops afterwards: the strings met so far, their words, and lists still
    being appended to."""

    __slots__ = (
        "analyzer",
        "group_docs",
        "group_field",
        "group_length",
        "group_sids",
        "occurs",
        "shared_sid_of",
        "sid_of",
        "words_of",
    )

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.sid_of: dict[str, int] = {}  # string -> string id
        # the same for the strings of SHARED_FIELDS: a string there is weighed by how many tools share it, so it
        # is another string than the same text as a name or a summary
        self.shared_sid_of: dict[str, int] = {}
        self.words_of: list[list[str]] = []  # per string: its lowercase words that have a term
        self.occurs: list[list[int]] = []  # per string: document * 16 + field, for each place it occurs
        self.group_docs: list[list[int]] = []  # per group: its documents
        self.group_field: list[int] = []  # per group: its field
        self.group_sids: list[tuple[int, ...]] = []  # per group: its strings' ids, in order
        self.group_length: list[int] = []  # per group: its length in words

    def add(self, string: str, sid_of: dict[str, int]) -> int:
        """The id of a string met for the first time in ``sid_of``'s space, analyzed."""
        sid = sid_of[string] = len(self.words_of)
        self.words_of.append(self.analyzer.kept_words(string))
        self.occurs.append([])
        return sid

    def group(self, strings: tuple[str, ...], f: int, sid_of: dict[str, int]) -> int:
        """A new group for one field's strings (three or more). Its strings are mostly known already (the same
        parameters recur across operations): only the new ones are met in Python, the rest is C."""
        for string in filterfalse(sid_of.__contains__, strings):
            if string not in sid_of:  # the same new string twice in one list
                self.add(string, sid_of)
        sids = tuple(map(sid_of.__getitem__, strings))
        self.group_sids.append(sids)
        self.group_length.append(sum(map(len, map(self.words_of.__getitem__, sids))))
        self.group_docs.append([])
        self.group_field.append(f)
        return len(self.group_docs) - 1


class Model:
    """A collection's BM25F model. Documents are numbered in the order of ``tools``.

    The unit of text is a distinct string of the spec (an id, a summary, a parameter's name, its description,
    ...): each is analyzed once, into its lowercase words that have a term. The model keeps one inverted list,
    lowercase word -> strings (a string listed once per occurrence), and each stem's written forms; a stem's
    strings are its forms' strings merged. A term's postings are gathered from the strings that have it, the first
    time a query uses it.

    Where a string occurs: a field of one or two strings (an id, a summary, a path) records its documents one by
    one (document * 16 + field). A field of more strings (a parameter list) is a *group*: the same list on many
    operations is one group, read once, with the documents that have it. Its strings, and so its length and its
    norm, are the same in each of them, so a term's weight in the group is summed once and then added to each of
    its documents.
    """

    def __init__(self, tools: Sequence[Tool], analyzer: Analyzer, settings: SearchSettings) -> None:
        self.settings = settings
        self.analyzer = analyzer
        self.n_docs = len(tools)
        build = _Build(analyzer)
        counted = [settings.fields[name].weight > 0.0 for name in FIELDS]  # a field weighted 0 adds nothing
        groups: list[dict[tuple[str, ...], int]] = [{} for _ in FIELDS]  # per field: strings -> group
        strings_of: list[
            tuple[int, ...]
        ] = []  # per document: string id * 16 + field, for its strings with terms
        groups_of: list[tuple[int, ...]] = []  # per document: its groups
        shared = [name in SHARED_FIELDS for name in FIELDS]
        sid_of, shared_sid_of = build.sid_of, build.shared_sid_of
        words_of, occurs, add = build.words_of, build.occurs, build.add
        lengths: list[list[int]] = []
        for d, tool in enumerate(tools):
            doc_lengths = [0] * len(FIELDS)
            entries: list[int] = []
            doc_groups: list[int] = []
            place = d * _SLOTS
            for f, strings in enumerate(field_strings(tool)):
                if not counted[f]:
                    continue
                ids = shared_sid_of if shared[f] else sid_of
                if len(strings) > 2:
                    g = groups[f].get(strings)
                    if g is None:
                        g = groups[f][strings] = build.group(strings, f, ids)
                    build.group_docs[g].append(d)
                    doc_groups.append(g)
                    doc_lengths[f] = build.group_length[g]
                    continue
                n = 0
                for string in strings:
                    sid = ids.get(string)
                    if sid is None:
                        sid = add(string, ids)
                    words = words_of[sid]
                    if words:
                        occurs[sid].append(place + f)
                        entries.append(sid * _SLOTS + f)
                        n += len(words)
                doc_lengths[f] = n
            lengths.append(doc_lengths)
            strings_of.append(tuple(entries))
            groups_of.append(tuple(doc_groups))
        # What stays is kept in tuples of numbers, which the cycle collector stops tracking after its first look:
        # as lists, an index's ~10,000 small containers would be walked by every later full collection.
        self._occurs = [tuple(places) for places in occurs]  # per string: document * 16 + field, per place
        self._in_groups = _inverted(build.group_sids)  # string id -> its groups, once per occurrence
        self._strings = strings_of
        self._doc_groups = groups_of
        self._group_docs = [tuple(docs) for docs in build.group_docs]  # per group: its documents
        self._group_field = build.group_field  # per group: its field
        # per string: what each of its occurrences counts (``string_weight``; whole outside SHARED_FIELDS)
        weight = self._weight = [1.0] * len(words_of)
        for sid in shared_sid_of.values():
            places = len(occurs[sid]) + sum([len(build.group_docs[g]) for g in self._in_groups.get(sid, ())])
            weight[sid] = string_weight(places, self.n_docs, settings.shared_discount)
        # lowercase word -> string ids, once per occurrence, ascending
        self._word_in = _inverted(words_of)
        # the words in order, for finding a stem's written forms (``_forms``) without stemming every word
        self._sorted_words = sorted(self._word_in)
        self._stem_words: dict[str, tuple[str, ...]] | None = None  # stem -> its lowercase words, on demand
        # per document and field (at document * 16 + field): w_f / ((1 - b_f) + b_f * len_f(d) / avglen_f)
        norm = self._norm = [0.0] * (_SLOTS * len(tools))
        for f, name in enumerate(FIELDS):
            spec = settings.fields[name]
            present = [doc[f] for doc in lengths if doc[f]]
            avg = sum(present) / len(present) if present else 1.0
            w, keep, slope = spec.weight, 1.0 - spec.b, spec.b / avg
            for d, doc in enumerate(lengths):
                if doc[f]:
                    norm[d * _SLOTS + f] = w / (keep + slope * doc[f])
        # a group's norm: the same in each of its documents (the same strings, so the same length)
        self._group_norm = [
            norm[docs[0] * _SLOTS + f] for docs, f in zip(self._group_docs, self._group_field, strict=True)
        ]
        self._cache: dict[str, dict[int, float] | None] = {}
        self._counts: dict[str, dict[int, float]] = {}  # term -> string id -> weighed occurrences, on demand
        self._weights: dict[str, dict[int, float]] = {}  # term -> group -> weighed occurrences, on demand
        self._shares: dict[str, dict[int, tuple[tuple[str, float], ...]]] = {}  # term -> document -> shares
        self._acc = [0.0] * self.n_docs  # a zeroed buffer for summing tf~ per document

    def has(self, stem: str) -> bool:
        """Whether some tool has ``stem``."""
        return bool(self._forms(stem))

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(self.analyzer.lowercase_terms(self._word_in))

    def _forms(self, stem: str) -> tuple[str, ...]:
        """The lowercase words of the collection whose stem is ``stem``.

        Every word of the collection is stemmed once, in one call into the stemmer (C), the first time a
        stem is looked up; the words are then grouped by stem.
        """
        by_stem = self._stem_words
        if by_stem is None:
            by_stem = self._stem_words = {}
            words = self._sorted_words
            for word, term in zip(words, stems(words), strict=True):
                found = by_stem.get(term)
                by_stem[term] = (word,) if found is None else (*found, word)
        return by_stem.get(stem, ())

    def surface(self) -> dict[str, int]:
        """Lowercase surface word (stopwords left out) -> occurrences in the distinct strings: the speller's
        vocabulary."""
        return {word: len(strings) for word, strings in self._word_in.items()}

    def sole_form(self, stem: str, word: str) -> bool | None:
        """How the lowercase ``word`` (whose stem is ``stem``) stands to its stem in the collection: True when it is
        the stem's only written form (its exact posting would equal the stem's), False when other forms occur too,
        None when the collection never writes it."""
        if word not in self._word_in:
            return None
        return len(self._forms(stem)) == 1  # every occurrence of the stem is this word

    def _counts_of(self, term: str) -> dict[int, float]:
        """String id -> occurrences of ``term`` (a stem or ``=word``) there times the string's weight, for the
        strings that have it."""
        found = self._counts.get(term)
        if found is None:
            word_in = self._word_in
            strings: Sequence[int]
            if term.startswith(EXACT):
                strings = word_in.get(term[1:], ())
            else:
                words = self._forms(term)
                strings = (
                    word_in[words[0]]
                    if len(words) == 1
                    else sorted(chain.from_iterable(map(word_in.__getitem__, words)))
                )
            # a plain dict of numbers, which the cycle collector does not track (a Counter is tracked)
            weight = self._weight
            found = self._counts[term] = {sid: n * weight[sid] for sid, n in Counter(strings).items()}
        return found

    def _weights_of(self, term: str) -> dict[int, float]:
        """Group -> weighed occurrences of ``term`` in the group's strings, for the groups that have it."""
        found = self._weights.get(term)
        if found is None:
            found = self._weights[term] = {}
            in_groups = self._in_groups
            for sid, count in self._counts_of(term).items():
                if sid in in_groups:
                    for g in in_groups[sid]:
                        found[g] = found.get(g, 0.0) + count
        return found

    def posting(self, term: str) -> dict[int, float] | None:
        """The postings of ``term`` (a stem or ``=word``): document -> score, for the documents that have it; None
        when no tool has it."""
        if term in self._cache:
            return self._cache[term]
        counts = self._counts_of(term)
        built = None
        if counts:
            acc, norm, occurs = self._acc, self._norm, self._occurs
            touched: list[int] = []  # the documents reached, each once: norms are positive
            for sid, count in counts.items():
                for place in occurs[sid]:
                    d = place >> _SHIFT
                    before = acc[d]
                    if not before:
                        touched.append(d)
                    acc[d] = before + count * norm[place]
            weights = self._weights_of(term)
            group_docs, group_norm = self._group_docs, self._group_norm
            for g, count in weights.items():
                value = count * group_norm[g]
                for d in group_docs[g]:
                    before = acc[d]
                    if not before:
                        touched.append(d)
                    acc[d] = before + value
            k1 = self.settings.k1
            n = len(touched)
            scale = idf(n, self.n_docs) * (k1 + 1.0)
            built = {
                d: scale * t / (k1 + t) for d, t in zip(touched, map(acc.__getitem__, touched), strict=True)
            }
            deque(map(acc.__setitem__, touched, repeat(0.0)), maxlen=0)  # a clean buffer, in C
        self._cache[term] = built
        return built

    def trim(self) -> None:
        """Drop the memoized field splits (``shares``); they are computed again when asked."""
        self._shares.clear()

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
        counts = self._counts_of(term)
        norm, place = self._norm, d * _SLOTS
        split: dict[int, float] = {}
        for entry in self._strings[d]:
            count = counts.get(entry >> _SHIFT)
            if count:
                f = entry & _MASK
                split[f] = split.get(f, 0.0) + count * norm[place + f]
        groups = self._doc_groups[d]
        if groups:
            weights = self._weights_of(term)
            for g in groups:
                count = weights.get(g)
                if count:
                    f = self._group_field[g]
                    split[f] = split.get(f, 0.0) + count * self._group_norm[g]
        if len(split) == 1:  # one field has it all
            out = cached[d] = _WHOLE[next(iter(split))]
            return out
        total = sum(split.values()) or 1.0
        out = cached[d] = tuple([(FIELDS[f], split[f] / total) for f in sorted(split)])  # in FIELDS order
        return out

"""The built-in search: rank the tools of a collection for a query, with the evidence behind each row.

The query is read with the API vocabulary (``qlab.engine.vocabulary``): framing left out, numbers weak, each word
also matching its synonyms, and the verb's intent, whose methods get a prior (twice when the request's scope,
one item or a whole collection, matches the path's shape: ``qlab.engine.shape``). Each word becomes a
``WordPosting`` over the ``qlab.engine.bm25f`` model. Then the best ``target_head`` rows are re-ordered among
themselves by the targets the request names (what a tool acts on: its path's last names, else its name less its
verbs, and its aliases); no row below them enters. A row holds its score split over the fields and the signals
(``synonym``, ``intent``, ``scope``, ``target``), matched terms and corrections.

Ranking is deterministic: score descending, then safe methods first (GET, HEAD, no method; then POST, PUT, PATCH;
then DELETE), then tool id ascending.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Collection, Mapping, Sequence
from operator import attrgetter, itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple

from qlab.adapters.memo import Generations
from qlab.collection.model import Tool
from qlab.engine import shape
from qlab.engine import vocabulary as vocab
from qlab.engine.bm25f import DEFAULT_SETTINGS, EXACT, Model, SearchSettings
from qlab.engine.spelling import Speller
from qlab.engine.text import Analyzer, split_words
from qlab.engine.types import SearchResult, SearchRow

_MEMO_LIMIT = 200_000
# The rows' shared evidence is memoized in two generations of this many entries (``qlab.adapters.memo.Generations``): a
# large run meets many distinct evidence rows, most of them once, so keeping them all would grow its peak memory
# with the number of cases; two bounded generations keep the rows that recur.
_EVIDENCE_GENERATION = 20_000
Evidence = tuple[
    Mapping[str, float], tuple[str, ...], Mapping[str, str]
]  # field scores, matched terms, fixes
_NO_FIXES: Mapping[str, str] = MappingProxyType({})
_NO_TARGETS: Mapping[int, float] = MappingProxyType({})
_UNSEEN: Any = object()
_PRUNE_FROM = 512  # postings entries of a query from which MaxScore pruning pays for its bookkeeping
# A tool is left out of the pool's completion only when its bound times this is still below the k-th score:
# the bound and the scores are float sums taken in different orders, and this margin is far above what their
# rounding can differ by, so a tool whose score ties the k-th is always completed.
_SAFE = 1.0 + 1e-9
_METHOD_ORDER = {"DELETE": 2, "POST": 1, "PUT": 1, "PATCH": 1}  # ties: safe methods first, DELETE last
SYNONYM = "synonym"  # evidence key: what a word scored through one of its synonyms
INTENT = "intent"  # evidence key: the method prior
SCOPE = "scope"  # evidence key: the shape prior (a collection or one item, as the request says)
TARGET = "target"  # evidence key: what naming the tool's target added (head rows only)


def _add(scores: dict[int, float], posting: Mapping[int, float]) -> None:
    """Add a word's posting to ``scores`` (document -> score so far)."""
    if not scores:
        scores.update(posting)  # 0.0 + s is s
        return
    get = scores.get
    for d, s in posting.items():
        scores[d] = get(d, 0.0) + s


def _kth(scores: Collection[float], k: int) -> float:
    """The k-th largest of ``scores`` (k at most their number): a sort in C beats heapq's loop in Python up to a
    few hundred scores."""
    return sorted(scores)[-k] if len(scores) < 300 else heapq.nlargest(k, scores)[-1]


def _completed(
    scores: Mapping[int, float],
    left: Sequence[WordPosting],
    *,
    rest: float,
    threshold: float,
    k: int,
    floor: float = 0.0,
    keep: int = -1,
) -> dict[int, float]:
    """The final scores of the documents that can still make the Top-K, once the words ``left`` (which with the
    prior add at most ``rest``) are added to them.

    The pool is what MaxScore keeps: a partial score plus ``rest`` reaching ``threshold`` (the k-th partial
    score). The words left are added to it one at a time, best first; after each, the pool keeps only the
    documents whose score plus what the words still left could add reaches the k-th score of the pool (or
    ``floor``, when higher). ``keep``: ``rank_of``'s target; once it leaves the pool (k tools are above it) the
    rest is not added and the pool returned lacks it."""
    pool = {d: s for d, s in scores.items() if s + rest >= threshold}
    last = len(left) - 1
    for i, word in enumerate(left):
        if keep >= 0 and keep not in pool:
            break
        by_doc = word.by_doc
        if len(by_doc) < len(pool):
            for d in by_doc.keys() & pool.keys():
                pool[d] += by_doc[d]
        else:
            get = by_doc.get
            for d, s in pool.items():
                pool[d] = s + get(d, 0.0)
        rest -= word.ub
        if i < last and len(pool) > k:
            threshold = max(_kth(pool.values(), k), floor)
            pool = {d: s for d, s in pool.items() if (s + rest) * _SAFE >= threshold}
    return pool


def lead(top: Sequence[tuple[int, float]], values: Mapping[int, float], n: int) -> list[tuple[int, float]]:
    """``top`` ((document, score), best first) with its first ``n`` rows re-ordered among themselves by their score
    plus what ``values`` adds to them (their scores then include it); rows that tie keep their order, and the rows
    after the head stay as they are."""
    if not values:
        return list(top)
    head = [(d, score + values.get(d, 0.0)) for d, score in top[:n]]
    head.sort(key=itemgetter(1), reverse=True)  # stable: ties keep the ranking's own order
    return [*head, *top[n:]]


class WordPosting:
    """What one query word adds to every tool's score, with the model terms it stands for."""

    __slots__ = (
        "_shares",
        "_views",
        "by_doc",
        "correction",
        "fixes",
        "matched",
        "parts",
        "synonyms",
        "term",
        "ub",
        "via",
    )

    def __init__(
        self,
        model: Model,
        term: str,
        parts: tuple[tuple[str, float], ...],
        correction: tuple[str, str] | None,
        synonyms: tuple[str, ...] = (),
        synonym_weight: float = 0.0,
        barred: Collection[int] = (),
        verb: bool = False,
    ) -> None:
        self.term = term  # the stem the word matched (or was corrected to)
        self.parts = parts  # (model term, weight): the stem, and the exact word when it counts
        self.correction = correction  # (misspelt word, vocabulary word) for a rescued word
        first = (model.posting(parts[0][0]) or {}) if parts else {}
        weight = parts[0][1] if parts else 1.0
        by_doc = first if weight == 1.0 else {d: score * weight for d, score in first.items()}
        for extra_term, extra_weight in parts[1:]:
            # an exact word's texts are a subset of its stem's: only its own documents change
            extra = model.posting(extra_term)
            if extra:
                if by_doc is first:
                    by_doc = dict(first)
                for d, score in extra.items():
                    by_doc[d] = by_doc[d] + extra_weight * score
        # document -> the synonym through which this word scores there (better than its own score); ``barred``:
        # the documents no synonym may score in; ``verb``: the word says an intent
        self.via: dict[int, str] = {}
        if not verb and 2 * len(first) > model.n_docs:
            # a word most tools have tells nothing; a rarer synonym would make it tell ("conversation" on every
            # operation of a conversations API, "chat" in one parameter). Not for a verb: the method in each
            # path makes "get" common, and its synonyms are how "get" finds "fetch" in a name.
            synonyms = ()
        self.synonyms = synonyms  # the synonym stems this word also matches through
        if synonyms and synonym_weight > 0.0:
            best: dict[int, tuple[float, str]] = {}
            for other in synonyms:
                for d, score in (model.posting(other) or {}).items():
                    if d in barred:
                        continue
                    value = score * synonym_weight
                    if value > best.get(d, (0.0, ""))[0]:
                        best[d] = (value, other)
            if best:
                if by_doc is first:
                    by_doc = dict(first)
                for d, (value, other) in best.items():
                    if value > by_doc.get(d, 0.0):
                        by_doc[d] = value
                        self.via[d] = other
        self.by_doc = by_doc  # document -> what this word adds to its score
        self.ub = max(by_doc.values(), default=0.0)  # the most this word adds to any document
        self._shares: dict[int, tuple[tuple[str, float], ...]] = {}
        self._views: dict[int, Mapping[str, float]] = {}
        # what a row matched by this word alone shows: built once, shared read-only by every such row
        self.matched = (term,) if parts else ()
        self.fixes: Mapping[str, str] = MappingProxyType(dict([correction]) if correction else {})

    def field_scores(self, model: Model, d: int) -> Mapping[str, float]:
        """The field scores of a row that this word alone matched (read-only, shared)."""
        found = self._views.get(d)
        if found is None:
            found = self._views[d] = MappingProxyType(dict(self.contributions(model, d)))
        return found

    def contributions(self, model: Model, d: int) -> tuple[tuple[str, float], ...]:
        """This word's score in document ``d`` split over the fields: (field, contribution), summing to its
        score. Computed the first time ``d`` makes a Top-K, then kept."""
        found = self._shares.get(d)
        if found is not None:
            return found
        if d in self.via:  # scored through a synonym: the whole score is the synonym's
            found = self._shares[d] = ((SYNONYM, self.by_doc[d]),)
            return found
        split: dict[str, float] = {}
        for model_term, weight in self.parts:
            posting = model.posting(model_term)
            score = posting.get(d) if posting is not None else None
            if not score:
                continue
            for name, share in model.shares(model_term, d):
                split[name] = split.get(name, 0.0) + score * weight * share
        found = self._shares[d] = tuple(split.items())
        return found


class Prior(NamedTuple):
    """What a request's intent adds to a tool's score: ``bonus`` to the tools of the methods its verb asks for
    (``lifted``), and ``bonus`` again to those of them whose path has the shape its scope says (``scoped``)."""

    lifted: frozenset[int]
    scoped: frozenset[int]
    bonus: float

    @property
    def most(self) -> float:
        """The most the prior adds to any document."""
        if not self.lifted:
            return 0.0
        return self.bonus * 2.0 if self.scoped else self.bonus

    def of(self, d: int) -> float:
        """What the prior adds to document ``d``."""
        if d not in self.lifted:
            return 0.0
        return self.bonus * 2.0 if d in self.scoped else self.bonus


_NO_PRIOR = Prior(frozenset(), frozenset(), 0.0)


class Ranking(NamedTuple):
    """A query's Top-K before its evidence rows: (document, score) best first, the words' postings, the
    documents the intent lifted and by how much, the query terms."""

    top: Sequence[tuple[int, float]]
    words: list[WordPosting]
    lifted: Collection[int]
    bonus: float
    terms: tuple[str, ...]
    content: tuple[str, ...] = ()  # the query's content words (framing and values left out)
    scoped: Collection[int] = ()  # the lifted documents whose path has the shape the request's scope says
    targets: Mapping[int, float] = _NO_TARGETS  # head document -> what naming its target added


@dataclasses.dataclass(frozen=True, slots=True)
class WordReading:
    """How one content word of a query matches: ``word`` (its own stem, maybe also through synonyms),
    ``synonyms`` (only through them), ``correction`` (rescued to ``corrected``), ``unmatched``, ``stopword``."""

    word: str
    term: str
    how: str
    synonyms: tuple[str, ...] = ()  # the synonym stems that scored somewhere
    corrected: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Explanation:
    reading: vocab.Reading
    methods: tuple[str, ...]  # what the intent favours
    words: tuple[WordReading, ...]


class SearchIndex:
    """An immutable index over ``tools``. Build once per collection; ``search`` is cheap.

    Not meant for several threads at once: queries fill memos (word postings, evidence) that later ones share.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        settings: SearchSettings = DEFAULT_SETTINGS,
        vocabulary: vocab.Vocabulary | None = None,
    ) -> None:
        self.settings = settings
        self.api_vocabulary = vocabulary if vocabulary is not None else vocab.default()
        self.analyzer = Analyzer()
        self.tools: tuple[Tool, ...] = tuple(
            sorted(tools, key=lambda tool: (_METHOD_ORDER.get(tool.method or "", 0), tool.id))
        )
        self._ids = tuple(tool.id for tool in self.tools)
        self._doc_of: dict[str, int] = {}  # tool id -> its document (-1: an id several tools have)
        for d, tool_id in enumerate(self._ids):
            self._doc_of[tool_id] = -1 if tool_id in self._doc_of else d
        self._model = Model(self.tools, self.analyzer, settings)
        self._speller: Speller | None = None
        self._words: dict[str, WordPosting | None] = {}  # lowercase word -> its posting
        self._values: dict[str, WordPosting | None] = {}  # a number of a query -> its weak posting
        # (document, lifted by the intent, *its matched words) -> the row's evidence, read-only
        self._evidence: Generations[tuple[Any, ...], Evidence] = Generations(_EVIDENCE_GENERATION)
        # what the intent's methods add: ``intent_weight`` times the idf scale of the collection, ln(1 + N): one
        # constant per index (the same for every query), so a row's evidence depends on its words alone
        self._bonus = self.api_vocabulary.intent_weight * math.log(1.0 + len(self.tools))
        # intent -> the documents whose method it asks for
        self._intent_docs: dict[str, frozenset[int]] = {
            intent: frozenset(d for d, tool in enumerate(self.tools) if (tool.method or "") in methods)
            for intent, methods in self.api_vocabulary.methods.items()
        }
        names = shape.collections(tool.path or "" for tool in self.tools)
        shapes = [shape.shape(tool.path or "", names) for tool in self.tools]
        # scope -> the documents whose path has that shape
        self._shape_docs = {
            scope: frozenset(d for d, found in enumerate(shapes) if found == scope) for scope in shape.SCOPES
        }
        self._scoped: dict[tuple[str, str], frozenset[int]] = {}  # (intent, scope) -> the documents of both
        # per document: its targets' stems, one set per target (``_targets_of``)
        self._targets = tuple(self._targets_of(tool, names) for tool in self.tools)
        self._head = settings.target_head if settings.target_weight > 0.0 else 0
        self._target_unit = settings.target_weight * math.log(1.0 + len(self.tools))
        self._sources = tuple(tool.source for tool in self.tools)
        self._one_source = len(set(self._sources)) <= 1
        # the stems of the words that name the API's collections ("setup" and "intent" of ``setup_intents``): a
        # verb's synonym that is one of them names a resource here ("add" -> "setup" would find SetupIntents)
        self._resource_terms = frozenset(term for name in names for term in self.analyzer.terms(name))
        # intent -> the documents whose method says the opposite: a reading verb's synonym never matches an
        # operation that changes (PUT, PATCH, DELETE), a changing verb's never one that only reads (GET, HEAD);
        # POST does both (searches, actions)
        changes, reads = frozenset(("PUT", "PATCH", "DELETE")), frozenset(("GET", "HEAD"))
        self._contrary = {
            intent: frozenset(
                d
                for d, tool in enumerate(self.tools)
                if tool.method in (changes if intent == "read" else reads)
            )
            for intent in vocab.INTENTS
        }

    def _targets_of(self, tool: Tool, names: frozenset[str]) -> tuple[frozenset[str], ...]:
        """The stems of what ``tool`` acts on, one set per target: its path's (``shape.target``), else its
        name's without the verbs (an MCP tool, or a path that says nothing: ``findPetsByStatus`` acts on pets and
        their status; what it does is the intent's to weigh), and each reviewed alias's (an alias names what the
        tool acts on the way its users say it)."""
        terms = self.analyzer.terms
        aim = shape.target(tool.path or "", names)
        verbs = self.api_vocabulary.verbs
        own = (
            frozenset(terms(aim))
            if aim
            else frozenset([t for t in terms(tool.name or tool.id) if t not in verbs])
        )
        return tuple(found for found in (own, *map(frozenset, map(terms, tool.aliases))) if found)

    @property
    def ids(self) -> tuple[str, ...]:
        """The tool ids by document number."""
        return self._ids

    @property
    def vocabulary(self) -> frozenset[str]:
        """Every stem of the collection."""
        return self._model.stems

    def correct(self, word: str) -> tuple[str, str] | None:
        """(vocabulary word, its stem) for a misspelt lowercase ``word``, or None."""
        if self._speller is None:  # built on the first unknown word: many query sets never need it
            self._speller = Speller(self._model.surface())
        fixed = self._speller.correct(word)
        if fixed is None:
            return None
        term = self.analyzer.term(fixed)
        return (fixed, term) if self._model.has(term) else None

    def _resolve(self, lower: str) -> WordPosting | None:
        """The posting of one lowercase content word: its stem (and exact form), or its synonyms, or the
        vocabulary word the speller rescues it to."""
        term = self.analyzer.term(lower)
        if not term:
            return None
        model = self._model
        synonyms = tuple([s for s in self.api_vocabulary.synonyms.get(term, ()) if model.has(s)])
        weight = self.api_vocabulary.synonym_weight
        barred: Collection[int] = ()
        intent = self.api_vocabulary.verbs.get(term)
        if (
            intent is not None and synonyms
        ):  # a verb: its synonyms stand for the verb, not for this API's nouns
            synonyms = tuple([s for s in synonyms if s not in self._resource_terms])
            barred = self._contrary[intent]
        exact_weight = self.settings.exact_weight
        if model.has(term):
            if not exact_weight:
                parts: tuple[tuple[str, float], ...] = ((term, 1.0),)
            else:
                sole = model.sole_form(term, lower)
                if sole:
                    parts = ((term, 1.0 + exact_weight),)  # its exact posting would equal the stem's
                elif sole is False:
                    parts = ((term, 1.0), (EXACT + lower, exact_weight))
                else:
                    parts = ((term, 1.0),)
            return WordPosting(model, term, parts, None, synonyms, weight, barred, verb=intent is not None)
        if synonyms:  # a word the collection never uses, but its synonyms it does ("remove" for "delete")
            return WordPosting(model, term, (), None, synonyms, weight, barred)
        found = self.correct(lower)
        if found is None:
            return None
        return WordPosting(model, found[1], ((found[1], self.settings.correction_weight),), (lower, found[0]))

    def read(self, query: str) -> vocab.Reading:
        """How the vocabulary reads ``query``: content words, framing, values, intent (``qlab search
        --explain`` shows it)."""
        return self.api_vocabulary.read(split_words(query))

    def rank_of(self, query: str, *, k: int, target: str) -> int | None:
        """``search(query, k=k).rank_of(target)`` without building the evidence rows (shadow rank asks this of
        every case a learning suggestion affects, most of them misses). The answer is None without ranking when
        the target matches no word of the query (it is in no row), or when ``k`` tools (or the head's number,
        when more) are sure to score above it (``_outranked``); the other queries are ranked. The target's place
        is that of the words' ranking, unless it is in the head: then the head is ranked whole and re-ordered."""
        d = self._doc_of.get(target)
        if d is None or k <= 0:
            return None
        reading = self.read(query)
        words = self._words_of(reading)
        n = max(k, self._head)  # the rows the Top-K is taken from
        floor, keep = 0.0, d
        if d >= 0:
            if not any([d in word.by_doc for word in words]):
                return None
            own = self._score(d, words, reading)
            if self._outranked(own * _SAFE, words, n):
                return None
            floor = own / _SAFE  # every tool that could rank above the target scores more than this
        ranking = self._rank(reading, words, n, floor, keep)
        ids = self._ids
        position = next((i for i, (found, _) in enumerate(ranking.top, 1) if ids[found] == target), None)
        if position is not None and position <= self._head:
            # a row below the target may pass it in the head, and the floor left such rows out: rank the head whole
            ranking = self._led(self._rank(reading, words, self._head), k)
            position = next((i for i, (found, _) in enumerate(ranking.top, 1) if ids[found] == target), None)
        return position if position is not None and position <= k else None

    def _score(self, d: int, words: list[WordPosting], reading: vocab.Reading) -> float:
        """Document ``d``'s score for these words and the intent's prior, summed in query order (the ranking may
        sum it in another order: the result can differ in its last bits)."""
        own = sum([word.by_doc.get(d, 0.0) for word in words])
        return own + self._prior(reading).of(d)

    def _prior(self, reading: vocab.Reading) -> Prior:
        """What the request's intent adds, and to which documents."""
        intent, scope = reading.intent, reading.scope
        if intent is None:
            return _NO_PRIOR
        lifted = self._intent_docs.get(intent)
        if not lifted:
            return _NO_PRIOR
        if scope is None:
            return Prior(lifted, frozenset(), self._bonus)
        key = (intent, scope)
        scoped = self._scoped.get(key)
        if scoped is None:
            scoped = self._scoped[key] = lifted.intersection(self._shape_docs[scope])
        return Prior(lifted, scoped, self._bonus)

    def _outranked(self, line: float, words: list[WordPosting], k: int) -> bool:
        """Whether ``k`` tools are sure to score above ``line`` (a document's score times ``_SAFE``): the query's
        best word (highest ``ub``) alone gives them more.

        Every posting score is positive, so what one word gives a tool never exceeds its whole score. The
        document's score is summed in another order than the ranking sums it (``_score``), so a tool counts only
        when it passes that score times ``_SAFE``: far above what the order can change, so no tool tied with the
        document counts.
        Walking more words settled few more queries than it cost.
        """
        best = max(words, key=attrgetter("ub"))
        return len([score for score in best.by_doc.values() if score > line]) >= k

    def trim(self) -> None:
        """Drop what the index memoizes for speed (each word's posting, the numbers' postings, the rows' shared
        evidence, the field splits): between a run's gates they only hold memory (up to 200,000 postings each,
        two generations of evidence). Results are the same; the next queries rebuild what they need."""
        self._words.clear()
        self._values.clear()
        self._evidence.clear()
        self._model.trim()

    def explain(self, query: str) -> Explanation:
        """What the search makes of ``query`` before ranking: framing and values left out, the intent and the
        methods it favours, and per content word how it matches (``qlab search --explain``)."""
        reading = self.read(query)
        words = []
        for lower in reading.content:
            term = self.analyzer.term(lower)
            if not term:
                words.append(WordReading(lower, "", "stopword"))
                continue
            posting = self._postings([lower])
            if not posting:
                words.append(WordReading(lower, term, "unmatched"))
                continue
            word = posting[0]
            how = "correction" if word.correction else ("synonyms" if not word.parts else "word")
            synonyms = tuple(sorted(set(word.via.values())))
            fixed = word.correction[1] if word.correction else None
            words.append(WordReading(lower, word.term, how, synonyms, fixed))
        methods = self.api_vocabulary.methods.get(reading.intent or "", ())
        return Explanation(reading, methods, tuple(words))

    def words(self, query: str) -> list[WordPosting]:
        """The postings that score ``query``: its content words', one per stem (the first word with a stem
        wins), in query order, then its numbers' (weak) ones."""
        return self._words_of(self.read(query))

    def _postings(self, content: Sequence[str]) -> list[WordPosting]:
        memo = self._words
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        out: list[WordPosting] = []
        seen: set[str] = set()
        for word in content:
            posting = memo.get(word, _UNSEEN)
            if posting is _UNSEEN:
                posting = memo[word] = self._resolve(word)
            if posting is not None and posting.term not in seen:
                seen.add(posting.term)
                out.append(posting)
        return out

    def _value_postings(self, values: Sequence[str]) -> list[WordPosting]:
        """The postings of the query's numbers at ``value_weight``: an id or amount that a tool's examples or
        descriptions show is weak evidence for it, never a word that outweighs the request's words."""
        memo = self._values
        out: list[WordPosting] = []
        for value in dict.fromkeys(values):
            posting = memo.get(value, _UNSEEN)
            if posting is _UNSEEN:
                if len(memo) > _MEMO_LIMIT:
                    memo.clear()
                term = self.analyzer.term(value)
                weight = self.settings.value_weight
                posting = memo[value] = (
                    WordPosting(self._model, term, ((term, weight),), None)
                    if term and weight > 0.0 and self._model.has(term)
                    else None
                )
            if posting is not None:
                out.append(posting)
        return out

    def search(self, query: str, *, k: int) -> SearchResult:
        """The ``k`` best tools for ``query``, best first, each row with its evidence (``rank``, then ``rows``)."""
        ranking = self.rank(query, k=k)
        return SearchResult(rows=self.rows(ranking), query_terms=ranking.terms)

    def rows(self, ranking: Ranking, top: Sequence[tuple[int, float]] | None = None) -> tuple[SearchRow, ...]:
        """The evidence rows of a ranking's Top-K, or of ``top`` ((document, score) pairs of that ranking)."""
        if not ranking.words:
            return ()
        return self._rows(
            ranking.top if top is None else top,
            ranking.words,
            ranking.lifted,
            ranking.bonus,
            ranking.scoped,
            ranking.targets,
        )

    def rank(self, query: str, *, k: int, targets: bool = True) -> Ranking:
        """The ``k`` best documents for ``query`` with their scores, best first (no evidence yet); its head
        re-ordered by the targets the query names (``targets=False``: the words' and the intent's ranking alone;
        the hybrid engine re-orders its own fused head with ``target_values`` and ``lead``).

        Scores are summed in a dictionary of the tools the words match. A query whose postings are short adds
        them all, in query order. Otherwise words are added best first (highest ``ub``, the most a word adds to
        any tool). Once ``k`` tools are scored and the words left could add less than the k-th score, no
        tool only those words reach can enter the Top-K (MaxScore, Turtle & Flood 1995): their long postings are
        never walked. The words left are added, best first, to the tools that could still reach the k-th score
        (the pool), walking the shorter of the word's posting and the pool; after each word the pool drops the
        tools whose score plus what the words still left could add is below the pool's k-th score (which only
        grows). A word in every tool of a large collection ("number", "list") costs a look-up per pool tool
        instead of a pass over the collection. Scores and order are the same as adding every posting: each
        tool's words are added in the same order.
        """
        reading = self.read(query)
        words = self._words_of(reading)
        if not targets or k <= 0:
            return self._rank(reading, words, k)
        return self._led(self._rank(reading, words, max(k, self._head)), k)

    @property
    def head(self) -> int:
        """How many of a ranking's best rows the targets re-order (0: none)."""
        return self._head

    def _led(self, ranking: Ranking, k: int) -> Ranking:
        """``ranking``'s Top-K once its head is re-ordered by the targets the query names (``lead``)."""
        head = self._head
        values = self.target_values(ranking, [d for d, _ in ranking.top[:head]]) if head else _NO_TARGETS
        if not values:
            return ranking._replace(top=ranking.top[:k])
        return ranking._replace(top=lead(ranking.top, values, head)[:k], targets=values)

    def target_values(self, ranking: Ranking, head: Sequence[int]) -> Mapping[int, float]:
        """Document -> what naming its target adds, for the documents of ``head`` (best first) whose target the
        ranking's words or their synonyms name: ``target_weight`` times ln(1 + N), times the share of its best
        named target's stems the words name, times its score in ``ranking`` over the ranking's best score (0 for a
        document not in it). In a collection of several sources, only for the documents of ``head[0]``'s source."""
        best = ranking.top[0][1] if ranking.top else 0.0
        if not head or best <= 0.0:
            return _NO_TARGETS
        named: set[str] = set()
        for word in ranking.words:
            named.add(word.term)
            named.update(word.synonyms)
        scores = dict(ranking.top)
        unit = self._target_unit / best
        source, sources = self._sources[head[0]], self._sources
        values: dict[int, float] = {}
        for d in head:
            if not self._one_source and sources[d] != source:
                continue
            share = max([len(aim & named) / len(aim) for aim in self._targets[d]], default=0.0)
            if share and d in scores:
                values[d] = unit * share * scores[d]
        return values

    def _words_of(self, reading: vocab.Reading) -> list[WordPosting]:
        """The postings of a query's reading: its content words', then its numbers' (weak) ones."""
        words = self._postings(reading.content)
        if reading.values:
            words += self._value_postings(reading.values)
        return words

    def _rank(
        self, reading: vocab.Reading, words: list[WordPosting], k: int, floor: float = 0.0, keep: int = -1
    ) -> Ranking:
        """``rank`` of a query already read into its words' postings. ``floor``: ``rank_of``'s bound, below which
        no tool matters to it (a score its target's exceeds): tools that cannot reach it are left out too, so
        the Top-K may lack them, never a tool at or above the floor. ``keep``: its target (see ``_completed``)."""
        terms = tuple([word.term for word in words])
        if k <= 0 or not words:
            return Ranking((), [], (), 0.0, terms, reading.content)
        prior = self._prior(reading)
        scores: dict[int, float] = {}  # document -> its score so far: only the documents a word matched
        if sum([len(word.by_doc) for word in words]) < _PRUNE_FROM:  # short postings: add them all
            for word in words:
                _add(scores, word.by_doc)
            return self._finish(words, scores, k, terms, prior, reading.content)
        order = sorted(words, key=lambda w: -w.ub)
        rest = prior.most  # what the words not yet added (and the prior) could add at most
        for word in order:
            rest += word.ub
        best = threshold = 0.0
        stop = len(order)
        for i, word in enumerate(order):
            if rest * _SAFE < floor:  # a tool no word has reached yet stays below the floor
                threshold = floor
                stop = i
                break
            if rest < best and len(scores) >= k:  # the k-th score is at most the best one: worth a look
                above = [
                    s for s in scores.values() if s > rest
                ]  # the k-th score is above rest: k of them are
                if len(above) >= k:
                    threshold = max(_kth(above, k), floor)
                    stop = i
                    break
            _add(scores, word.by_doc)
            if word.by_doc:
                best = max(best, max(map(scores.__getitem__, word.by_doc)))
            rest -= word.ub
        if stop < len(order):
            scores = _completed(
                scores, order[stop:], rest=rest, threshold=threshold, k=k, floor=floor, keep=keep
            )
        return self._finish(words, scores, k, terms, prior, reading.content)

    def _finish(
        self,
        words: list[WordPosting],
        scores: dict[int, float],
        k: int,
        terms: tuple[str, ...],
        prior: Prior,
        content: tuple[str, ...],
    ) -> Ranking:
        """The Top-K of ``scores`` (document -> score: score descending, then document number), the ``prior``
        added to the documents it lifts."""
        bonus = prior.bonus
        lifted: Collection[int] = ()
        scoped: Collection[int] = ()
        if prior.lifted and bonus:
            lifted = prior.lifted.intersection(scores)
            for d in lifted:
                scores[d] += bonus
            if prior.scoped:
                scoped = prior.scoped.intersection(scores)
                for d in scoped:
                    scores[d] += bonus
        if len(scores) > k:  # keep every document tied with the k-th score: ties break on the id below
            kth = _kth(scores.values(), k)
            top = [(d, score) for d, score in scores.items() if score >= kth]
        else:
            top = list(scores.items())
        top.sort()  # by document number: the order of ties, which the stable sort below keeps
        top.sort(key=itemgetter(1), reverse=True)
        del top[k:]
        return Ranking(top, words, lifted, bonus, terms, content, scoped)

    def _evidence_of(self, d: int, matched: list[WordPosting], bonus: float, scope: float = 0.0) -> Evidence:
        """Field scores (with ``intent`` when ``bonus``, ``scope`` when ``scope``), matched terms and corrections
        of a row."""
        model = self._model
        fields: dict[str, float] = {}
        fixes: dict[str, str] = {}
        terms = []
        for word in matched:
            parts = word._shares.get(d)  # the cached split, without a method call per match
            if parts is None:
                parts = word.contributions(model, d)
            if fields:
                get = fields.get
                for name, value in parts:
                    fields[name] = get(name, 0.0) + value
            else:
                fields.update(parts)  # the first word's split as it is: 0.0 + value is value
            if word.correction is not None:
                fixes[word.correction[0]] = word.correction[1]
            # what the word matched in d: its stem, or ``stem~synonym`` through a synonym
            other = word.via.get(d) if word.via else None
            terms.append(word.term if other is None else f"{word.term}~{other}")
        if bonus:
            fields[INTENT] = bonus
        if scope:
            fields[SCOPE] = scope
        return MappingProxyType(fields), tuple(terms), (MappingProxyType(fixes) if fixes else _NO_FIXES)

    def _rows(
        self,
        top: Sequence[tuple[int, float]],
        words: list[WordPosting],
        lifted: Collection[int],
        bonus: float,
        scoped: Collection[int] = (),
        targets: Mapping[int, float] = _NO_TARGETS,
    ) -> tuple[SearchRow, ...]:
        """The evidence of the Top-K. Each word finds the top documents it matched (a C-level set
        intersection), so the work grows with the matches, not with rows x words; a row one word alone matched
        reuses that word's cached, read-only evidence (a row a target lifted gets its own copy, with ``target``)."""
        model = self._model
        top_set = {d for d, _ in top}
        by_doc: dict[int, list[WordPosting]] = {d: [] for d in top_set}
        for word in words:
            for d in word.by_doc.keys() & top_set:
                by_doc[d].append(word)
        ids = self._ids
        rows = []
        evidence = self._evidence
        for rank, (d, score) in enumerate(top, 1):
            matched = by_doc[d]
            up = d in lifted
            aim = targets.get(d)
            if len(matched) == 1 and not up and not aim and not matched[0].via:
                word = matched[0]
                rows.append(
                    SearchRow(ids[d], rank, score, word.field_scores(model, d), word.matched, word.fixes)
                )
                continue
            # the same words on the same tool show the same evidence: kept read-only, shared by later queries
            shaped = up and d in scoped
            key = (d, up + shaped, *matched)
            found = evidence.get(key)
            if found is None:
                found = self._evidence_of(d, matched, bonus if up else 0.0, bonus if shaped else 0.0)
                evidence.put(key, found)
            if aim:  # what the target adds depends on the query's best score: this row's own copy
                found = (MappingProxyType({**found[0], TARGET: aim}), found[1], found[2])
            rows.append(SearchRow(ids[d], rank, score, *found))
        return tuple(rows)

"""How people ask for API operations: the query-understanding layer of the built-in search.

Read once from ``vocabulary.json`` beside this module (reviewed, with its sources), extended per project by
the aliases file's ``vocabulary`` section (``Collection.vocabulary``). It tells the search:

- **framing**: request phrases ("I need to", "can you") whose words are not content;
- **intent**: the verbs, phrasal ones too ("get rid of"), that name the HTTP methods a request asks for; the
  index adds a small prior to operations of those methods;
- **synonyms**: groups of words that mean the same (remove/delete); a query word also matches the other words
  of its groups, at a lower weight;
- **values**: numbers in a request count only at ``SearchSettings.value_weight``;
- **scope**: words for a whole collection ("all") or one item ("single"); the index favours operations whose
  path has that shape (``qlab.engine.shape``).

Words are compared as stems (``qlab.engine.text.stem``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from qlab.engine.shape import SCOPES
from qlab.engine.text import stem

DATA_FILE = Path(__file__).with_name("vocabulary.json")
INTENTS = ("read", "create", "update", "delete")


class Reading(NamedTuple):
    """What the vocabulary reads in one query (its lowercase words): the words that stay content, the framing
    words left out, the numbers left out, and the intent with the word that said it. (A named tuple: one is
    made per query.)"""

    content: tuple[str, ...]
    framing: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    intent: str | None = None
    verb: str | None = None
    scope: str | None = None  # ``collection`` or ``item`` when the request's words say one (and not both)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Stems -> intents and synonym stems; framing phrases as word tuples; the weights of both signals."""

    methods: Mapping[str, tuple[str, ...]]  # intent -> HTTP methods
    verbs: Mapping[str, str]  # verb stem -> intent
    synonyms: Mapping[str, tuple[str, ...]]  # stem -> the other stems of its groups
    framing: Mapping[
        str, tuple[tuple[str, ...], ...]
    ]  # first word -> phrases starting with it, longest first
    scopes: Mapping[str, str] = field(default_factory=dict)  # lowercase word -> the scope it says
    # phrasal verbs: (verb stem, lowercase particle) -> intent; "get rid" deletes where "get" alone reads
    phrasal: Mapping[tuple[str, str], str] = field(default_factory=dict)
    synonym_weight: float = 0.6
    intent_weight: float = 0.3
    sources: tuple[str, ...] = field(default=(), compare=False)
    _cache: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)  # word -> intent
    _first_words: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)
    _patterns: dict[str, re.Pattern[str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def _starts(self) -> frozenset[str]:
        """The words a framing phrase starts with."""
        found = self._first_words.get("")
        if found is None:
            found = self._first_words[""] = frozenset(self.framing)
        return found

    def read(self, words: Sequence[str]) -> Reading:
        """Split a query's lowercase words (``qlab.engine.text.split_words``) into content, framing and values,
        and find its intent: the first word that says one, framing words included ("show me" says read), a
        question word too ("what deals are open" asks to read, whatever "open" would say)."""
        cache = self._cache
        if len(cache) > 100_000:
            cache.clear()
        for word in words:
            if word not in cache:
                cache[word] = self._verb_intent(word)
        said = next(filter(cache.__getitem__, words), None)  # the first word with an intent
        intent = cache[said] if said is not None else None
        if not self._particles.isdisjoint(words):
            intent, said = self._phrasal_intent(words, intent, said)
        framing: tuple[str, ...] = ()
        content: Sequence[str] = words
        if not self._starts.isdisjoint(words):  # a framing phrase may start here: cut them out, in C
            # one pass: split() on the pattern's group gives the text between phrases, then a phrase, in turns
            parts = self._pattern().split(" " + " ".join(words) + " ")
            if len(parts) > 1:
                framing = tuple(" ".join(parts[1::2]).split())
                content = " ".join(parts[0::2]).split()
        scope = self._scope(words) if intent else None
        if any(map(str.isdigit, content)):
            values = tuple([w for w in content if w.isdigit()])
            return Reading(
                tuple([w for w in content if not w.isdigit()]), framing, values, intent, said, scope
            )
        return Reading(tuple(content), framing, (), intent, said, scope)

    @property
    def _particles(self) -> frozenset[str]:
        """The second words of the phrasal verbs."""
        found = self._first_words.get(" ")
        if found is None:
            found = self._first_words[" "] = frozenset(particle for _, particle in self.phrasal)
        return found

    def _phrasal_intent(
        self, words: Sequence[str], intent: str | None, said: str | None
    ) -> tuple[str | None, str | None]:
        """The intent and the words that say it, when a phrasal verb starts before (or at) the first intent word.
        Its particle may come up to two words later ("take a video out", "turn it off")."""
        last = len(words) - 1 if said is None else words.index(said)  # a phrasal verb must start by here
        particles, phrasal = self._particles, self.phrasal
        best: tuple[int, str, str] | None = None  # (where the verb is, the intent, the words)
        for j, particle in enumerate(words):
            if particle not in particles:
                continue
            for i in range(max(0, j - 3), min(j, last + 1)):
                found = phrasal.get((stem(words[i]), particle))
                if found is not None and (best is None or i < best[0]):
                    best = (i, found, f"{words[i]} {particle}")
                    break
        return (best[1], best[2]) if best is not None else (intent, said)

    def _verb_intent(self, word: str) -> str | None:
        """The intent a lowercase word says as the verb of a request. A form in -s that is the verb's own plus -s
        ("requests", "updates", "holds") is a plural noun or a third person, never the imperative a request
        uses: it says none."""
        own = stem(word)
        if word.endswith("s") and not word.endswith("ss") and own == stem(word[:-1]):
            return None
        return self.verbs.get(own)

    def _scope(self, words: Sequence[str]) -> str | None:
        """The scope the words say, when they say one and not the other."""
        scopes = self.scopes
        said = {scopes[word] for word in words if word in scopes}
        return said.pop() if len(said) == 1 else None

    def _pattern(self) -> re.Pattern[str]:
        """The framing phrases as one regular expression over a query's words joined by spaces (longest
        phrase first, each between spaces), captured as its one group."""
        found = self._patterns.get("")
        if found is None:
            phrases = sorted(_unphrase(self.framing), key=lambda p: (-len(p), p))
            alternatives = "|".join(re.escape(p) for p in phrases)
            found = self._patterns[""] = re.compile(f"(?<= )({alternatives})(?= )")
        return found

    def extended(self, extra: Mapping[str, Any]) -> Vocabulary:
        """This vocabulary with a project's additions (the aliases file's ``vocabulary`` section)."""
        if not extra:
            return self
        verbs = dict(self.verbs)
        for verb, intent in (extra.get("verbs") or {}).items():
            verbs[stem(verb)] = intent
        synonyms = {k: set(v) for k, v in self.synonyms.items()}
        _add_groups(synonyms, extra.get("synonyms") or ())
        framing = _phrases([*_unphrase(self.framing), *(extra.get("framing") or ())])
        return Vocabulary(
            methods=self.methods,
            verbs=verbs,
            synonyms={k: tuple(sorted(v)) for k, v in synonyms.items()},
            framing=framing,
            scopes=self.scopes,
            phrasal=self.phrasal,
            synonym_weight=self.synonym_weight,
            intent_weight=self.intent_weight,
            sources=self.sources,
        )


def _words(phrase: str) -> tuple[str, ...]:
    return tuple("".join(ch if ch.isalnum() else " " for ch in phrase.lower()).split())


def _phrases(phrases: Iterable[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        words = _words(phrase)
        if words and words not in by_first.get(words[0], []):
            by_first.setdefault(words[0], []).append(words)
    return {k: tuple(sorted(v, key=len, reverse=True)) for k, v in by_first.items()}


def _unphrase(framing: Mapping[str, tuple[tuple[str, ...], ...]]) -> list[str]:
    return [" ".join(p) for phrases in framing.values() for p in phrases]


def _add_groups(synonyms: dict[str, set[str]], groups: Iterable[Iterable[str]]) -> None:
    for group in groups:
        stems = {stem(w) for word in group for w in _words(word)}
        for s in stems:
            synonyms.setdefault(s, set()).update(stems - {s})


def parse(data: Mapping[str, Any]) -> Vocabulary:
    """A Vocabulary from the data file's shape (see ``vocabulary.json``)."""
    methods: dict[str, tuple[str, ...]] = {}
    verbs: dict[str, str] = {}
    phrasal: dict[tuple[str, str], str] = {}
    for intent, spec in data["intents"].items():
        if intent not in INTENTS:
            raise ValueError(f"unknown intent {intent!r}")
        methods[intent] = tuple(m.upper() for m in spec["methods"])
        for verb in spec["verbs"]:
            verbs.setdefault(stem(verb), intent)
        for phrase in spec.get("phrasal") or ():
            verb, particle = phrase.split()
            phrasal.setdefault((stem(verb), particle), intent)
    synonyms: dict[str, set[str]] = {}
    _add_groups(synonyms, data.get("synonyms") or ())
    scopes: dict[str, str] = {}
    for scope, words in (data.get("scopes") or {}).items():
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}")
        scopes.update(dict.fromkeys(words, scope))
    weights = data.get("weights") or {}
    return Vocabulary(
        methods=methods,
        verbs=verbs,
        synonyms={k: tuple(sorted(v)) for k, v in synonyms.items()},
        framing=_phrases(data.get("framing") or ()),
        scopes=scopes,
        phrasal=phrasal,
        synonym_weight=float(weights.get("synonym", 0.6)),
        intent_weight=float(weights.get("intent", 0.3)),
        sources=tuple(data.get("sources") or ()),
    )


_DEFAULT: list[Vocabulary] = []


def default() -> Vocabulary:
    """The packaged vocabulary (read once)."""
    if not _DEFAULT:
        _DEFAULT.append(parse(json.loads(DATA_FILE.read_text(encoding="utf-8"))))
    return _DEFAULT[0]


def for_collection(extra: Mapping[str, Any] | None) -> Vocabulary:
    """The packaged vocabulary with a project's additions (``Collection.vocabulary``)."""
    return default().extended(extra or {})

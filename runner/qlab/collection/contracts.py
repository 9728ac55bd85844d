"""IO contracts: which success-response field of one tool can fill which required input of another.

Producer fields (``fields.FieldFinder``) are indexed under normalized keys, so finding the producers of an
input is a dictionary lookup, not a comparison of all pairs:

- ``name``: the field's normalized name (``deliveryId``, ``delivery_id`` → ``deliveryid``);
- ``alias``: the name with a synonymous last word canonicalized (``memberNr`` → ``memberno``);
- ``schema``: for an id-like field, the entity noun joined to it (``id`` of a Delivery → ``deliveryid``).

Only reference inputs get producers (``is_reference``): path parameters and inputs whose last word is id-like.
Values such as ``limit`` or ``date`` come from the case's entities. Types must be compatible
(``type_factor``); destructive tools never produce.

Each (consumer, input) keeps its ``TOP_K`` best producers, scored 0-1 (``_contracts_for``); ties break on
producer id and path, so the output is the same on every run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, cast

from qlab.collection.fields import Field, FieldFinder
from qlab.collection.model import IOContract, MutationClass, Parameter, Tool
from qlab.collection.names import normalize, segment_before, singular, tokens
from qlab.collection.schemas import schema_type

TOP_K = 3
FANOUT = 16  # candidates kept per key and family before context scoring
ID_WORDS = frozenset(
    {
        "id",
        "ids",
        "uuid",
        "uid",
        "guid",
        "key",
        "code",
        "no",
        "number",
        "num",
        "nr",
        "name",
        "slug",
        "handle",
        "identifier",
        "ref",
        "uri",
        "urn",
    }
)
GENERIC_PENALTY = 0.6
_SYNONYMS = {
    "identifier": "id",
    "uuid": "id",
    "guid": "id",
    "uid": "id",
    "number": "no",
    "num": "no",
    "nr": "no",
    "nbr": "no",
}
MatchKind = Literal["name", "alias", "schema"]
_BASE = {"name": 0.8, "alias": 0.7, "schema": 0.65}
_PRODUCER = {MutationClass.READ_ONLY: 1.0, MutationClass.MUTATING: 0.75}


@dataclass(slots=True)  # not frozen: tens of thousands are made on a large API, and frozen init costs
class Offer:
    tool: Tool
    field: Field
    match: str  # name | alias | schema
    prior: float  # score without the consumer's context


def canonical(name: str) -> str:
    """``memberNumber`` → ``memberno``: the last word replaced by its canonical synonym."""
    words = list(tokens(name))
    if not words:
        return normalize(name)
    words[-1] = _SYNONYMS.get(words[-1], words[-1])
    return "".join(words)


def is_id_like(name: str) -> bool:
    words = tokens(name)
    return bool(words) and words[-1] in ID_WORDS


def is_reference(param: Parameter) -> bool:
    """A path parameter, or an input named like an identifier (``deliveryId``, ``memberNo``, ``device_id``)."""
    if param.location == "path":
        return True
    words = tokens(param.name)
    return bool(words) and words[-1] in ID_WORDS and words[-1] != "name"


def type_factor(param_type: str | None, field_type: str | None) -> float:
    """1 exact, 0.9 loose (a number fills a string), 0.95 unknown, 0 incompatible."""
    if param_type is None or field_type is None:
        return 0.95
    if param_type == field_type or {param_type, field_type} == {"integer", "number"}:
        return 1.0
    if param_type == "string" and field_type in ("integer", "number"):
        return 0.9
    return 0.0


class ContractIndex:
    """Producer fields of a collection, indexed by key and by (key, family) and (key, path)."""

    def __init__(self, tools: Sequence[Tool], *, wanted: set[str] | None = None) -> None:
        """``wanted``: the only keys any consumer will look up (None: all)."""
        self.by_key: dict[str, list[Offer]] = defaultdict(list)
        finder = FieldFinder(None if wanted is None else _relevance(wanted))
        for tool in tools:
            producer = _PRODUCER.get(tool.mutation)
            if producer is None:
                continue
            for field in finder.fields(tool):
                for key, match in _field_keys(field.name, field.nouns):
                    if wanted is not None and key not in wanted:
                        continue
                    prior = _BASE[match] * producer - 0.05 * (field.depth - 1)
                    self.by_key[key].append(Offer(tool, field, match, prior))
        self.by_family: dict[tuple[str, str], list[Offer]] = defaultdict(list)
        self.by_path: dict[tuple[str, str], list[Offer]] = defaultdict(list)
        self.best: dict[str, list[Offer]] = {}
        for key, offers in self.by_key.items():
            offers.sort(key=_rank)
            self.best[key] = offers[:FANOUT]
            for offer in offers:
                family = self.by_family[(key, offer.tool.family)]
                if len(family) < FANOUT:
                    family.append(offer)
                if offer.tool.path:
                    self.by_path[(key, offer.tool.path)].append(offer)

    def candidates(self, key: str, consumer: Tool, list_path: str | None) -> list[Offer]:
        offers = self.by_key.get(key)
        if not offers:
            return []
        if len(offers) <= FANOUT:
            return offers
        picked = list(self.best[key]) + self.by_family.get((key, consumer.family), [])
        if list_path:
            picked += self.by_path.get((key, list_path), [])
        return picked


def _relevance(wanted: set[str]) -> Callable[[str], bool]:
    """Whether a field name can produce any wanted key: by its name, its canonical name, or (id-like) a noun."""
    memo: dict[str, bool] = {}

    def relevant(name: str) -> bool:
        hit = memo.get(name)
        if hit is None:
            hit = memo[name] = normalize(name) in wanted or canonical(name) in wanted or is_id_like(name)
        return hit

    return relevant


def _rank(offer: Offer) -> tuple[float, str, str]:
    return (-offer.prior, offer.tool.id, offer.field.path)


@lru_cache(maxsize=65536)
def _field_keys(name: str, nouns: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    plain = normalize(name)
    keys = [(plain, "name")]
    canon = canonical(name)
    if canon != plain:
        keys.append((canon, "alias"))
    if is_id_like(name):
        for noun in nouns:
            qualified = noun + canon
            if qualified not in (plain, canon):
                keys.append((qualified, "schema"))
    return tuple(keys)


def _param_keys(param: Parameter, consumer: Tool) -> list[tuple[str, str | None]]:
    """(key, forced match) to look up: the name (match from the offer), its canonical form, its noun form."""
    plain = normalize(param.name)
    keys: list[tuple[str, str | None]] = [(plain, None)]
    canon = canonical(param.name)
    if canon != plain:
        keys.append((canon, "alias"))
    if len(tokens(param.name)) == 1 and consumer.path:
        segment = segment_before(consumer.path, param.name)
        if segment and is_id_like(param.name):  # /albums/{id}: the id of an album
            keys.append((normalize(singular(segment)) + canon, "schema"))
        elif (
            segment and normalize(singular(segment)) == plain
        ):  # /namespaces/{namespace}: a namespace's id or name
            keys += [(plain + "id", "schema"), (plain + "name", "schema")]
    return keys


def find_contracts(tools: Sequence[Tool]) -> tuple[IOContract, ...]:
    """Every contract of the collection, best ``TOP_K`` per (consumer, required input), in a stable order."""
    inputs = [(c, p) for c in tools for p in c.required_parameters if is_reference(p)]
    wanted = {key for consumer, param in inputs for key, _forced in _param_keys(param, consumer)}
    index = ContractIndex(tools, wanted=wanted)
    out: list[IOContract] = []
    for consumer, param in inputs:
        out.extend(_contracts_for(index, consumer, param))
    out.sort(key=lambda c: (c.consumer, c.parameter, -c.score, c.producer, c.field_path))
    return tuple(out)


def _contracts_for(index: ContractIndex, consumer: Tool, param: Parameter) -> list[IOContract]:
    """The ``TOP_K`` producers of one input.

    Looked up by the input's name, its canonical name and, for a bare id word (``/albums/{id}``), the noun of
    the segment before it. Score: base by match (``_BASE``) x ``type_factor`` x producer class
    (``_PRODUCER``), - 0.05 per property step below the first; x ``GENERIC_PENALTY`` for a bare id fed by
    another entity's field or a field named after its own entity; + 0.15 when the producer's path is the
    consumer's up to the input (list → detail); + 0.05 in the same family.
    """
    list_path = _list_path(consumer, param)
    param_type = schema_type(param.schema) if param.schema else None
    words = tokens(param.name)
    segment = segment_before(consumer.path, param.name) if consumer.path and len(words) == 1 else None
    noun = normalize(singular(segment)) if segment else None
    best: dict[tuple[str, str], tuple[float, str]] = {}  # (producer, path) -> (score, match)
    for key, forced in _param_keys(param, consumer):
        for offer in index.candidates(key, consumer, list_path):
            if offer.tool.id == consumer.id:
                continue
            factor = type_factor(param_type, offer.field.type)
            if factor == 0.0:
                continue
            match = forced if forced and _BASE[forced] < _BASE[offer.match] else offer.match
            score = (
                offer.prior / _BASE[offer.match] * _BASE[match] * factor
            )  # rebased when the lookup forced the match
            if noun and forced is None and noun not in offer.field.nouns:
                score *= GENERIC_PENALTY  # `id` of /albums/{id} fed by the id of some other entity
            elif forced is None and normalize(offer.field.name) in offer.field.nouns:
                score *= GENERIC_PENALTY  # a namespace's own `namespace` field: not what names it
            if list_path and offer.tool.path == list_path:
                score += 0.15
            if offer.tool.family == consumer.family:
                score += 0.05
            slot = (offer.tool.id, offer.field.path)
            if slot not in best or score > best[slot][0]:
                best[slot] = (score, match)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:TOP_K]
    return [
        IOContract(producer, path, consumer.id, param.name, cast(MatchKind, match), round(min(score, 1.0), 4))
        for (producer, path), (score, match) in ranked
    ]


def _list_path(consumer: Tool, param: Parameter) -> str | None:
    """``/members/{memberNo}/deliveries/{deliveryId}`` and ``deliveryId`` → ``/members/{memberNo}/deliveries``."""
    if not consumer.path or param.location != "path":
        return None
    marker = "/{" + param.name + "}"
    at = consumer.path.find(marker)
    return consumer.path[:at] if at > 0 else None

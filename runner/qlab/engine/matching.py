"""Match provided entities to a tool's parameters, and check each value against the parameter's schema.

A name matches a parameter in one of four ways, tried best first:

- ``exact``: the same string (``memberNo`` / ``memberNo``);
- ``normalized``: equal once case, ``_``, ``-``, dots and spaces are dropped (``member_no`` / ``memberNo``);
- ``alias``: one of the parameter's aliases (``x-aliases`` or ``x-qlab-aliases`` in its schema) matches
  exactly or normalized, or the names are equal once common abbreviations are expanded
  (``member_number`` / ``memberNo``);
- ``fuzzy``: the normalized names are at least ``FUZZY_THRESHOLD`` similar (``qlab.adapters.fuzzy``).

Every match is type-checked (``check_value``); a value that fails is not bound but kept as a ``TypeProblem``,
so the plan can say why. Each entity fills at most one parameter and each parameter takes at most one entity:
pairs are assigned greedily, best match kind first, then highest similarity, then parameter order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from qlab.adapters import fuzzy
from qlab.collection.model import Parameter, Tool
from qlab.engine.text import normalize_name, split_words

MatchKind = Literal["exact", "normalized", "alias", "fuzzy"]
KIND_ORDER: dict[str, int] = {"exact": 0, "normalized": 1, "alias": 2, "fuzzy": 3}
FUZZY_THRESHOLD = 0.85  # normalized similarity (0-1) of two names for a fuzzy match

# Identifier abbreviations that mean the same word; generic naming conventions, not any API's vocabulary.
_ABBREVIATIONS = {
    "no": "number",
    "num": "number",
    "nr": "number",
    "nbr": "number",
    "id": "identifier",
    "ident": "identifier",
    "qty": "quantity",
    "amt": "amount",
    "addr": "address",
    "desc": "description",
    "msg": "message",
    "cnt": "count",
    "ref": "reference",
    "dt": "date",
    "ts": "timestamp",
}
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """An entity bound to a parameter: how the names matched and the value after type coercion."""

    parameter: str
    entity: str
    kind: MatchKind
    similarity: float
    value: Any
    note: str = ""  # e.g. "coerced 42 to '42'"


@dataclass(frozen=True, slots=True)
class TypeProblem:
    """An entity that names a parameter but whose value does not fit the parameter's schema."""

    parameter: str
    entity: str
    kind: MatchKind
    message: str


def parameter_aliases(parameter: Parameter) -> tuple[str, ...]:
    """The aliases a spec declares for a parameter: ``x-aliases`` / ``x-qlab-aliases`` in its schema."""
    found: list[str] = []
    for key in ("x-aliases", "x-qlab-aliases"):
        value = parameter.schema.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Sequence):
            found.extend(str(item) for item in value)
    return tuple(found)


def _expanded(name: str) -> str:
    return "".join(_ABBREVIATIONS.get(word, word) for word in split_words(name))


def name_match(entity: str, parameter: Parameter) -> tuple[MatchKind, float] | None:
    """How ``entity`` names ``parameter`` and the similarity of the names, or None when it does not."""
    if entity == parameter.name:
        return "exact", 1.0
    left, right = normalize_name(entity), normalize_name(parameter.name)
    if left and left == right:
        return "normalized", 1.0
    for alias in parameter_aliases(parameter):
        if entity == alias or (left and left == normalize_name(alias)):
            return "alias", 1.0
    if left and _expanded(entity) == _expanded(parameter.name):
        return "alias", 1.0
    similarity = fuzzy.similarity(left, right) if left and right else 0.0
    if similarity >= FUZZY_THRESHOLD:
        return "fuzzy", similarity
    return None


def check_value(value: Any, schema: Mapping[str, Any]) -> tuple[bool, Any, str]:
    """(fits, value after coercion, note or error) for ``value`` against a parameter's JSON schema.

    Lossless coercions are allowed and noted: a number to a string, a numeric string to an integer or number,
    ``"true"``/``"false"`` to a boolean, a single value to a one-item array.
    """
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, Sequence) and options:
            errors = []
            for option in options:
                if isinstance(option, Mapping):
                    fits, coerced, note = check_value(value, option)
                    if fits:
                        return fits, coerced, note
                    errors.append(note)
            return False, value, " and ".join(errors)
    if value is None:
        ok = bool(schema.get("nullable")) or schema.get("type") == "null"
        return ok, value, "" if ok else "null is not allowed"
    types = schema.get("type")
    type_list = [types] if isinstance(types, str) else list(types or [])
    coerced, note = value, ""
    if type_list:
        for name in type_list:
            fits, coerced, note = _check_type(value, name, schema)
            if fits:
                break
        else:
            return False, value, note
    enum = schema.get("enum")
    if isinstance(enum, Sequence) and not isinstance(enum, str) and coerced not in enum:
        return False, value, f"{value!r} is not one of {list(enum)!r}"
    return True, coerced, note


def _check_type(value: Any, name: str, schema: Mapping[str, Any]) -> tuple[bool, Any, str]:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        if isinstance(value, str):
            return True, value, ""
        if is_number:
            return True, str(value), f"coerced {value!r} to {str(value)!r}"
        return False, value, f"expected a string, got {type(value).__name__} {value!r}"
    if name == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return True, value, ""
        if isinstance(value, float) and value.is_integer():
            return True, int(value), f"coerced {value!r} to {int(value)!r}"
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return True, int(value), f"coerced {value!r} to {int(value)!r}"
        return False, value, f"expected an integer, got {type(value).__name__} {value!r}"
    if name == "number":
        if is_number:
            return True, value, ""
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            return True, float(value), f"coerced {value!r} to {float(value)!r}"
        return False, value, f"expected a number, got {type(value).__name__} {value!r}"
    if name == "boolean":
        if isinstance(value, bool):
            return True, value, ""
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return True, value.lower() == "true", f"coerced {value!r} to {value.lower() == 'true'!r}"
        return False, value, f"expected a boolean, got {type(value).__name__} {value!r}"
    if name == "array":
        found = schema.get("items")
        items: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        out = []
        for item in values:
            fits, coerced, note = check_value(item, items)
            if not fits:
                return False, value, f"array item: {note}"
            out.append(coerced)
        return True, out, "" if isinstance(value, (list, tuple)) else f"wrapped {value!r} in an array"
    if name == "object":
        if isinstance(value, Mapping):
            return True, dict(value), ""
        return False, value, f"expected an object, got {type(value).__name__} {value!r}"
    if name == "null":
        return value is None, value, "expected null"
    return True, value, ""  # an unknown type name: nothing to check


def match_entities(
    tool: Tool, entities: Mapping[str, Any], *, parameters: Sequence[Parameter] | None = None
) -> tuple[dict[str, EntityMatch], list[TypeProblem]]:
    """Bind ``entities`` to ``tool``'s parameters (or to ``parameters``, a subset).

    Returns parameter name -> match, and the type problems of pairs that named each other but did not fit.
    """
    params = list(tool.parameters if parameters is None else parameters)
    candidates = []
    for p_index, parameter in enumerate(params):
        for entity in entities:
            found = name_match(entity, parameter)
            if found is not None:
                kind, similarity = found
                candidates.append((KIND_ORDER[kind], -similarity, p_index, entity, kind, similarity))
    candidates.sort(key=lambda c: c[:4])
    bound: dict[str, EntityMatch] = {}
    used: set[str] = set()
    problems: list[TypeProblem] = []
    for _, _, p_index, entity, kind, similarity in candidates:
        parameter = params[p_index]
        if parameter.name in bound or entity in used:
            continue
        fits, value, note = check_value(entities[entity], parameter.schema)
        if not fits:
            problems.append(TypeProblem(parameter.name, entity, kind, note))
            continue
        bound[parameter.name] = EntityMatch(parameter.name, entity, kind, similarity, value, note)
        used.add(entity)
    return bound, problems

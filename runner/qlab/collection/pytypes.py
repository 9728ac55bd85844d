"""Python type hints → JSON Schema, for the ``python`` collection source.

Covers what tool signatures use: ``int``, ``float``, ``str``, ``bool``, ``None``, ``bytes``, date/time, UUID,
Decimal, Path; ``list[X]``/``tuple``/``set``/``Sequence``; ``dict[str, X]``/``Mapping``; ``Optional[X]`` and
``X | None``; unions; ``Literal``; ``Enum`` subclasses; dataclasses; ``TypedDict``; ``Annotated`` (a string is
the description, a mapping is merged into the schema, e.g. ``{"example": 3}``). Anything else is ``{}``
(untyped, which the readiness report counts). A recursive dataclass ends in an ``x-qlab-recursive-ref`` marker.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime
import decimal
import enum
import pathlib
import types
import typing
import uuid
from collections.abc import Mapping
from typing import Any

from qlab.collection.refs import RECURSIVE_REF

_SIMPLE: dict[Any, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bytes: {"type": "string", "format": "binary"},
    type(None): {"type": "null"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    decimal.Decimal: {"type": "number"},
    pathlib.Path: {"type": "string"},
}
_ARRAYS = (
    list,
    tuple,
    set,
    frozenset,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Set,
    cabc.Iterable,
    cabc.Collection,
)
_MAPS = (dict, cabc.Mapping, cabc.MutableMapping)
_JSON_TYPE = {bool: "boolean", int: "integer", float: "number", str: "string"}


def schema_for(annotation: Any, *, _stack: tuple[Any, ...] = ()) -> dict[str, Any]:
    """The JSON Schema of one annotation (already evaluated; strings that could not be evaluated give ``{}``)."""
    if annotation is Any:
        return {}
    if annotation is None:
        return {"type": "null"}
    if isinstance(annotation, str):
        return {}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:  # before any hashing: its metadata may be unhashable (a dict)
        return _annotated(args, _stack)
    try:
        simple = _SIMPLE.get(annotation)
    except TypeError:  # an unhashable annotation object
        simple = None
    if simple is not None:
        return dict(simple)
    if origin is typing.Literal:
        return _enum(list(args))
    if origin is typing.Union or origin is types.UnionType:
        return _union(args, _stack)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum([member.value for member in annotation])
    if origin in _ARRAYS or annotation in _ARRAYS:
        return _array(origin or annotation, args, _stack)
    if origin in _MAPS or annotation in _MAPS:
        out: dict[str, Any] = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            out["additionalProperties"] = schema_for(args[1], _stack=_stack)
        return out
    if annotation in _stack:
        return {RECURSIVE_REF: getattr(annotation, "__qualname__", str(annotation))}
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _dataclass(annotation, (*_stack, annotation))
    if _is_typeddict(annotation):
        return _typeddict(annotation, (*_stack, annotation))
    return {}


def _annotated(args: tuple[Any, ...], stack: tuple[Any, ...]) -> dict[str, Any]:
    out = schema_for(args[0], _stack=stack)
    for meta in args[1:]:
        if isinstance(meta, str):
            out["description"] = meta
        elif isinstance(meta, Mapping):
            out.update({str(k): v for k, v in meta.items()})
    return out


def _enum(values: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"enum": values}
    kinds = {_JSON_TYPE.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        out["type"] = kinds.pop()
    return out


def _union(args: tuple[Any, ...], stack: tuple[Any, ...]) -> dict[str, Any]:
    members = [schema_for(a, _stack=stack) for a in args]
    if any(not m for m in members):  # Union with Any/unknown: anything goes
        return {}
    return {"anyOf": members}


def _array(container: Any, args: tuple[Any, ...], stack: tuple[Any, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array"}
    if container in (set, frozenset, cabc.Set):
        out["uniqueItems"] = True
    if container is tuple and args and args[-1] is not Ellipsis:
        items = [schema_for(a, _stack=stack) for a in args]
        out["minItems"] = out["maxItems"] = len(items)
        if all(i == items[0] for i in items):
            out["items"] = items[0]
        else:
            out["items"] = {"anyOf": items}
        return out
    if args and args[0] is not Any:
        out["items"] = schema_for(args[0], _stack=stack)
    return out


def _dataclass(cls: type, stack: tuple[Any, ...]) -> dict[str, Any]:
    hints = _hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        props[f.name] = schema_for(hints.get(f.name, f.type), _stack=stack)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "title": cls.__name__, "properties": props}
    if required:
        out["required"] = required
    return out


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _typeddict(cls: Any, stack: tuple[Any, ...]) -> dict[str, Any]:
    hints = _hints(cls)
    props = {name: schema_for(hint, _stack=stack) for name, hint in hints.items()}
    required = [name for name in hints if name in cls.__required_keys__]
    out: dict[str, Any] = {"type": "object", "title": cls.__name__, "properties": props}
    if required:
        out["required"] = required
    return out


def _hints(obj: Any) -> dict[str, Any]:
    """Evaluated type hints (with ``Annotated`` kept); the raw annotations when evaluation fails."""
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception:  # a forward reference that cannot be evaluated: keep what can be read
        return dict(getattr(obj, "__annotations__", {}) or {})


def hints_of(func: Any) -> dict[str, Any]:
    return _hints(func)

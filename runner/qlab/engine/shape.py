"""What an API's paths say about its operations: which names are its collections, whether an operation
addresses a whole collection, one item of it, or neither, and what it acts on (its target).

A *collection* is a literal path segment that some path follows with a path parameter (``pods`` when
``/pods/{name}`` exists). An operation's *shape* is ``item`` when its path ends with a parameter, ``collection``
when it ends with a collection, none otherwise (a sub-resource, an action, a singleton: ``/pods/{name}/log``,
``/user``). Its *target* is its last literal segment, and for an action or sub-resource of one item the segment
before it too (``pods log``, ``instances setName``, ``keypairs disable`` for ``/keypairs/{id}:disable``).

The search (``qlab.engine.index``) favours the operations whose shape the request's scope asks for and, among its
best rows, those whose target the request names.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

COLLECTION = "collection"
ITEM = "item"
SCOPES = (COLLECTION, ITEM)


def _segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def _is_parameter(segment: str) -> bool:
    return segment.startswith("{") and segment.endswith("}")


def collections(paths: Iterable[str]) -> frozenset[str]:
    """The literal segments of ``paths`` that some path follows with a path parameter."""
    found: set[str] = set()
    for path in paths:
        segments = _segments(path)
        for name, after in pairwise(segments):
            if _is_parameter(after) and not _is_parameter(name):
                found.add(name)
    return frozenset(found)


def shape(path: str, names: frozenset[str]) -> str | None:
    """``ITEM``, ``COLLECTION`` or None for an operation on ``path``, given the API's collections ``names``."""
    segments = _segments(path)
    if not segments:
        return None
    last = segments[-1]
    if _is_parameter(last):
        return ITEM
    return COLLECTION if last in names else None


def target(path: str, names: frozenset[str]) -> str:
    """The target of an operation on ``path`` (see the module docstring), given the API's collections ``names``:
    one or two literal segments joined by a space, "" for a path without a literal segment."""
    segments = _segments(path.replace("}:", "}/"))  # a custom method: an action on the item before it
    literal = [segment for segment in segments if not _is_parameter(segment)]
    if not literal:
        return ""
    last = segments[-1]
    if len(literal) > 1 and last == literal[-1] and _is_parameter(segments[-2]) and last not in names:
        return f"{literal[-2]} {last}"  # an action or a sub-resource of one item
    return literal[-1]

"""What an API's paths say about its operations: which names are its collections, whether an operation
addresses a whole collection, one item of it, or neither, and what it acts on (its target).

A *collection* of the API is a literal path segment that some path follows with a path parameter: ``pods`` when
``/namespaces/{namespace}/pods/{name}`` exists. An operation's *shape* is then

- ``item`` when its path ends with a path parameter (``/pods/{name}``);
- ``collection`` when its path ends with a collection (``/namespaces/{namespace}/pods``, ``/pods``);
- none otherwise: a sub-resource, an action or a singleton (``/pods/{name}/log``, ``/pulls/{n}/merge``,
  ``/user``), which a request's scope neither favours nor passes over.

An operation's *target* is what it acts on, in the path's own words: its last literal segment (``pods`` for
``/namespaces/{namespace}/pods/{name}`` and for ``/namespaces/{namespace}/pods``), and, when that segment is an
action or a sub-resource of one item (a literal right after a path parameter, and no collection), the segment
before it too (``instances setName`` for ``/instances/{instance}/setName``, ``pods log`` for ``/pods/{name}/log``,
``keypairs disable`` for a custom method's ``/keypairs/{keyPairId}:disable``).

The search reads the request's scope ("all my notes", "one conversation") and favours the operations of the
intent's methods that have that shape; among its best few rows, it favours those whose target the request names
(``qlab.engine.index``).
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

"""What an API's paths say about its operations: which names are its collections, and whether an operation
addresses a whole collection, one item of it, or neither.

A *collection* of the API is a literal path segment that some path follows with a path parameter: ``pods`` when
``/namespaces/{namespace}/pods/{name}`` exists. An operation's *shape* is then

- ``item`` when its path ends with a path parameter (``/pods/{name}``);
- ``collection`` when its path ends with a collection (``/namespaces/{namespace}/pods``, ``/pods``);
- none otherwise: a sub-resource, an action or a singleton (``/pods/{name}/log``, ``/pulls/{n}/merge``,
  ``/user``), which a request's scope neither favours nor passes over.

The search reads the request's scope ("all my notes", "one conversation") and favours the operations of the
intent's methods that have that shape (``qlab.engine.index``).
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

"""A memo bounded by recency: two generations of at most ``size`` entries each.

New entries go to the young generation; when it is full it becomes the old one (the old one is dropped), and an
old entry asked for again moves back to the young one. An entry still in use survives a turn, the memo never
holds more than twice ``size``, and dropping costs no bookkeeping per lookup (no LRU order to keep). The search
memoizes its rows' shared evidence (``qlab.engine.index``) this way: a large run meets many distinct evidence
rows, most of them once.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Generations(Generic[K, V]):
    __slots__ = ("old", "size", "young")

    def __init__(self, size: int) -> None:
        self.size = size
        self.young: dict[K, V] = {}
        self.old: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (moved to the young generation when it was in the old one), or None."""
        found = self.young.get(key)
        if found is None:
            found = self.old.get(key)
            if found is not None:
                self.put(key, found)
        return found

    def put(self, key: K, value: V) -> None:
        if len(self.young) >= self.size:
            self.old = self.young
            self.young = {}
        self.young[key] = value

    def clear(self) -> None:
        self.young = {}
        self.old = {}

    def __len__(self) -> int:
        return len(self.young) + len(self.old)


class ByIdentity(Generations[int, tuple[Any, V]]):
    """A bounded memo keyed by an object's identity (for objects that are not hashable, or whose equality costs
    more than what is memoized). Each entry holds its object, so while the entry is kept its id cannot be
    reused by another object; an entry found under the id of another object is a miss."""

    __slots__ = ()

    def find(self, obj: Any) -> V | None:
        """The value kept for ``obj``, or None."""
        entry = self.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else None

    def keep(self, obj: Any, value: V) -> V:
        """Keep ``value`` for ``obj``; returns it."""
        self.put(id(obj), (obj, value))
        return value

"""The Engine protocol: the system under test that the search, select and plan stages talk to.

Three implementations are registered in ``qlab.engine.registry``: ``builtin`` (in process, the default),
``http`` (a team's own service, JSON contract in ``schemas/engine-*.schema.json``) and ``python``
(``module:object``).

Three methods are optional, looked up by name: ``close()`` (the run calls it once at its end: an engine holding
a client or a process lets go of it), ``trim()`` (called after each gate: an engine that memoizes for speed drops
what it memoized, so a large run's later gates and outputs reuse that memory) and ``rank_of(query, *, k, target)``
(``search(query, k=k).rank_of(target)`` without the evidence rows, for shadow rank).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from qlab.engine.types import Plan, SearchResult, Selection


@runtime_checkable
class Engine(Protocol):
    """Each method is called once per case; an engine may raise ``qlab.contracts.errors.InputError`` for a bad reply."""

    name: str

    def search(self, query: str, *, k: int) -> SearchResult:
        """Return at most ``k`` rows, best first, ranks 1..n."""
        ...

    def select(
        self,
        query: str,
        result: SearchResult,
        *,
        entities: Mapping[str, Any],
        llm_target: str | None,
    ) -> Selection:
        """Pick the final target among ``result``'s rows; ``llm_target`` is a recorded or live LLM choice."""
        ...

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        """Synthesize a plan that reaches ``target`` with ``entities``; ask for what cannot be filled."""
        ...

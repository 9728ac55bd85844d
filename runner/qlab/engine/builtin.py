"""The built-in engine: qlab's own search index, target selector and planner, in process.

It is the default engine (``engine.type: builtin``). With ``engine.llm`` configured, ``select`` asks that
endpoint for a target when the case recorded none (``qlab.engine.llm``); the deterministic guardrails of
``qlab.engine.selector`` then keep or override it, and the call's usage lands in ``Selection.llm_usage``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from qlab.collection.model import Collection
from qlab.engine import planner, selector, vocabulary
from qlab.engine.bm25f import DEFAULT_SETTINGS, SearchSettings
from qlab.engine.index import Explanation, SearchIndex
from qlab.engine.types import Plan, SearchResult, Selection

if TYPE_CHECKING:  # the LLM client (and httpx under it) loads only when an LLM is configured
    from qlab.engine.llm import LLMClient


class BuiltinEngine:
    """Search, select and plan over ``collection``. The index is built on the first search."""

    name = "builtin"

    def __init__(
        self,
        collection: Collection,
        *,
        llm: LLMClient | None = None,
        settings: SearchSettings = DEFAULT_SETTINGS,
    ) -> None:
        self.collection = collection
        self.llm = llm
        self.settings = settings
        self._index: SearchIndex | None = None

    @property
    def index(self) -> SearchIndex:
        if self._index is None:
            self._index = SearchIndex(
                self.collection.tools,
                settings=self.settings,
                vocabulary=vocabulary.for_collection(self.collection.vocabulary),
            )
        return self._index

    def search(self, query: str, *, k: int) -> SearchResult:
        return self.index.search(query, k=k)

    def explain(self, query: str) -> Explanation:
        """How the search reads ``query`` (``qlab search --explain``)."""
        return self.index.explain(query)

    def select(
        self,
        query: str,
        result: SearchResult,
        *,
        entities: Mapping[str, Any],
        llm_target: str | None,
    ) -> Selection:
        usage: Mapping[str, Any] = {}
        if llm_target is None and self.llm is not None and result.rows:
            from qlab.engine.llm import Candidate

            tools = self.collection.by_id()
            candidates = [
                Candidate(row.tool_id, _summary(tools[row.tool_id]) if row.tool_id in tools else "")
                for row in result.rows
            ]
            choice = self.llm.choose(query, candidates, entities)
            llm_target, usage = choice.target, choice.usage
        selection = selector.select(
            query,
            result,
            collection=self.collection,
            entities=entities,
            llm_target=llm_target,
        )
        return replace(selection, llm_usage=dict(usage)) if usage else selection

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        return planner.synthesize(target, entities, collection=self.collection)

    def rank_of(self, query: str, *, k: int, target: str) -> int | None:
        """The rank of ``target`` in ``search(query, k=k)``, None when it is not there (no evidence rows made)."""
        if type(self).search is not BuiltinEngine.search:  # a subclass that ranks its own way (hybrid)
            return self.search(query, k=k).rank_of(target)
        return self.index.rank_of(query, k=k, target=target)

    def trim(self) -> None:
        """Drop the index's memo tables (between a run's gates: ``SearchIndex.trim``)."""
        if self._index is not None:
            self._index.trim()

    def close(self) -> None:
        if self.llm is not None:
            self.llm.close()


def _summary(tool: Any) -> str:
    text = str(tool.summary or tool.description or "")
    return text if len(text) <= 200 else text[:197] + "..."

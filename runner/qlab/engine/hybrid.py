"""The hybrid engine (``engine.type: hybrid``): the built-in engine with its search fused with an embedding
similarity (``qlab.engine.semantic``, the ``qlab[semantic]`` extra). Select and plan are the built-in ones.

A query is ranked twice: lexically (``SearchIndex``, ``pool`` rows) and by the cosine of its embedding with each
tool's (name, summary, description, path words). The candidates are the union of both lists' best ``pool``;
each gets

    fused = (1 - alpha) * lexical / best lexical + alpha * max(0, cosine)

(score normalization: the lexical score over the query's best one, so both parts lie in [0, 1]). ``alpha`` = 0.5
and ``pool`` = 30 were learned on the development set's tune split (bench/devset), never on the public
benchmarks; reciprocal rank fusion and a cosine relative to the query's best were tried there and did no
better (bench/RESULTS-search.md). A row's evidence is the lexical breakdown scaled the same
way plus ``semantic``: the parts still add up to the row's score. Ties: fused score, then the lexical order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from qlab.collection.model import Collection, Tool
from qlab.engine import semantic
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.llm import LLMClient
from qlab.engine.text import split_words
from qlab.engine.types import SearchResult, SearchRow

SEMANTIC = "semantic"  # evidence key


@dataclass(frozen=True, slots=True)
class Fusion:
    """How lexical and semantic scores are fused (learned on the dev set's tune split)."""

    alpha: float = 0.5  # the semantic part's weight
    pool: int = 30  # candidates taken from each ranking


DEFAULT_FUSION = Fusion()


def document_text(tool: Tool) -> str:
    """What a tool's embedding is made of: its id and name as words, summary, description, path words."""
    name = " ".join(split_words(tool.name if tool.name and tool.name != tool.id else tool.id))
    parts = (name, tool.summary, tool.description[:500], " ".join(split_words(tool.path or "")))
    return ". ".join(part for part in parts if part)


class HybridEngine(BuiltinEngine):
    """The built-in engine whose search fuses the lexical ranking with embedding similarity."""

    name = "hybrid"

    def __init__(
        self,
        collection: Collection,
        *,
        embedder: semantic.Embedder,
        cache_dir: Path | None = None,
        fusion: Fusion = DEFAULT_FUSION,
        llm: LLMClient | None = None,
    ) -> None:
        super().__init__(collection, llm=llm)
        self.embedder = embedder
        self.cache_dir = cache_dir
        self.fusion = fusion
        self._vectors: Any = None
        self._slot: dict[str, int] = {}
        self._tool_ids: tuple[str, ...] = ()

    def _documents(self) -> Any:
        if self._vectors is None:
            tools = self.index.tools  # the index's order
            self._slot = {tool.id: i for i, tool in enumerate(tools)}
            self._tool_ids = tuple(tool.id for tool in tools)
            texts = [document_text(tool) for tool in tools]
            key = self.collection.digest or "no-digest"
            self._vectors = semantic.cached_vectors(self.embedder, texts, cache_dir=self.cache_dir, key=key)
        return self._vectors

    def search(self, query: str, *, k: int) -> SearchResult:
        import numpy as np

        if k <= 0:
            return SearchResult(rows=())
        fusion = self.fusion
        pool = max(k, fusion.pool)
        lexical = self.index.search(query, k=pool)
        vectors = self._documents()
        content = " ".join(self.index.read(query).content) or query
        similarity = vectors @ self.embedder.embed([content])[0]
        best: Any = np.argpartition(-similarity, min(pool, len(similarity)) - 1)[:pool] if len(similarity) else ()
        ids = self._tool_ids
        rows = {row.tool_id: row for row in lexical.rows}
        top = lexical.rows[0].score if lexical.rows else 0.0
        scale = (1.0 - fusion.alpha) / top if top > 0 else 0.0
        order = {row.tool_id: i for i, row in enumerate(lexical.rows)}
        candidates: dict[str, float] = {}
        slot = self._slot
        for tool_id in (*rows, *(ids[i] for i in best)):
            if tool_id not in candidates:
                candidates[tool_id] = fusion.alpha * max(0.0, float(similarity[slot[tool_id]]))
        scored = []
        for tool_id, semantic_part in candidates.items():
            row = rows.get(tool_id)
            lexical_part = row.score * scale if row is not None else 0.0
            scored.append((lexical_part + semantic_part, -order.get(tool_id, pool), tool_id, semantic_part))
        scored.sort(reverse=True)
        out = []
        for rank, (score, _, tool_id, semantic_part) in enumerate(scored[:k], 1):
            row = rows.get(tool_id)
            fields: dict[str, float] = {}
            if row is not None:
                fields = {name: value * scale for name, value in row.field_scores.items()}
            if semantic_part:
                fields[SEMANTIC] = semantic_part
            out.append(
                SearchRow(
                    tool_id=tool_id,
                    rank=rank,
                    score=score,
                    field_scores=MappingProxyType(fields),
                    matched_terms=row.matched_terms if row is not None else (),
                    corrections=row.corrections if row is not None else _NONE,
                )
            )
        return SearchResult(rows=tuple(out), query_terms=lexical.query_terms)


_NONE: Mapping[str, str] = MappingProxyType({})

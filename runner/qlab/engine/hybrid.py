"""The hybrid engine (``engine.type: hybrid``): the built-in engine with its search fused with an embedding
similarity (``qlab.engine.semantic``, the ``qualitylab[semantic]`` extra). Select and plan are the built-in ones.

A query is ranked lexically (``SearchIndex``, its best ``pool`` tools) and by the cosine of its embedding with
every tool's (name, summary, description, path words). Each tool gets

    fused = (1 - alpha) * lexical / best lexical + alpha * max(0, cosine)

(0 lexically outside the pool; ``alpha`` and ``pool`` chosen on the development set's tune split). As in the
lexical ranking, the fused head is then re-ordered by the targets the query names (``SearchIndex.target_values``).
A row's evidence is the lexical breakdown scaled the same way plus ``semantic``: the parts add up to its score.
Ties: fused score, then the lexical order, then the document number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from qlab.collection.model import Collection, Tool
from qlab.engine import semantic
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.index import lead
from qlab.engine.text import split_words
from qlab.engine.types import SearchResult, SearchRow

if TYPE_CHECKING:
    from qlab.engine.llm import LLMClient

SEMANTIC = "semantic"  # evidence key


@dataclass(frozen=True, slots=True)
class Fusion:
    """How lexical and semantic scores are fused (learned on the dev set's tune split)."""

    alpha: float = 0.5  # the semantic part's weight
    pool: int = 20  # lexical candidates (the semantic side scores every tool)


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

    def _documents(self) -> Any:
        if self._vectors is None:
            tools = self.index.tools  # the index's order: a vector's row is its document number
            texts = [document_text(tool) for tool in tools]
            key = self.collection.digest or "no-digest"
            self._vectors = semantic.cached_vectors(self.embedder, texts, cache_dir=self.cache_dir, key=key)
        return self._vectors

    def search(self, query: str, *, k: int) -> SearchResult:
        if k <= 0:
            return SearchResult(rows=())
        fusion, index, embedder = self.fusion, self.index, self.embedder
        # scores only (evidence for the final rows alone), the head not re-ordered: the fused one is
        ranking = index.rank(query, k=max(k, fusion.pool), targets=False)
        vectors = self._documents()
        if not len(vectors):
            return SearchResult(rows=(), query_terms=ranking.terms)
        content = ranking.content
        vector = embedder.embed_words(content) if content else embedder.embed_one(query)
        pool = ranking.top
        top = pool[0][1] if pool else 0.0
        scale = (1.0 - fusion.alpha) / top if top > 0 else 0.0
        lexical = dict(pool)
        head = index.head
        chosen = semantic.fuse(vectors, vector, pool, alpha=fusion.alpha, scale=scale, k=max(k, head))
        values = index.target_values(ranking, [d for d, _, _ in chosen[:head]])
        if values:
            parts = {d: part for d, _, part in chosen}
            led = lead(
                [(d, score) for d, score, _ in chosen], {d: v * scale for d, v in values.items()}, head
            )
            chosen = [(d, score, parts[d]) for d, score in led]
            ranking = ranking._replace(targets=values)
        del chosen[k:]
        wanted = [(d, lexical[d]) for d, _, _ in chosen if d in lexical]
        evidence = iter(index.rows(ranking, wanted) if wanted else ())
        ids = index.ids
        out = []
        for rank, (d, score, part) in enumerate(chosen, 1):
            if d not in lexical:
                out.append(SearchRow(ids[d], rank, score, {SEMANTIC: part}, (), _NONE))
                continue
            row = next(evidence)  # the rows of ``wanted``, in its order: the chosen ones the pool holds
            fields = {name: value * scale for name, value in row.field_scores.items()}
            if part:
                fields[SEMANTIC] = part
            out.append(SearchRow(ids[d], rank, score, fields, row.matched_terms, row.corrections))
        return SearchResult(rows=tuple(out), query_terms=ranking.terms)


_NONE: Mapping[str, str] = MappingProxyType({})

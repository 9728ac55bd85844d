"""The target selector: pick the final tool among the Top-K rows, keeping or overriding an LLM's choice.

Each row gets deterministic evidence (``Evidence``): its search ``score``; ``exact``, whether the query names
the tool (``named_by_query``); ``fit``, how many provided entities bind to its parameters (``matching``).

The incumbent is the LLM's target when it is among the rows, else the top row. A challenger with strong
evidence over it (``_strong``: named by the query, a clear score margin, a better entity fit, or a tie with
fewer side effects) replaces it; ``decide`` gives the reason codes (``qlab.engine.types``).

**Ambiguity.** Two rows tie when alike on ``exact`` and ``fit`` with scores within ``AMBIGUITY_MARGIN`` of
the higher one (``Evidence.tied_with``). A row the selector picked by its own
evidence that ties with another is ``ambiguous`` (``ambiguous_candidates``; ``candidates``: the selected id,
then the tied ones). A kept LLM target is the LLM's tie-break, not ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Collection, MutationClass, Tool
from qlab.engine.matching import match_entities
from qlab.engine.text import split_words, stem
from qlab.engine.types import (
    AMBIGUOUS_CANDIDATES,
    LLM_TARGET_KEPT,
    LLM_TARGET_NOT_IN_TOP_K,
    LLM_TARGET_OVERRIDDEN,
    NO_CANDIDATES,
    NO_LLM_TARGET,
    SELECTED_BY_STRONG_EVIDENCE,
    SELECTED_TOP_RANK,
    SearchResult,
    Selection,
)

AMBIGUITY_MARGIN = 0.05  # scores within 5% of the higher one are a tie
_MUTATION_ORDER = {MutationClass.READ_ONLY: 0, MutationClass.MUTATING: 1, MutationClass.DESTRUCTIVE: 2}
OVERRIDE_MARGIN = 0.25  # a challenger needs a 25% higher score to override on score alone
FIT_SCORE_FLOOR = 0.5  # an entity-fit override needs at least half the incumbent's score


@dataclass(frozen=True, slots=True)
class Evidence:
    tool_id: str
    rank: int
    score: float
    exact: bool
    fit: int
    mutation: int = 0  # 0 read-only, 1 mutating, 2 destructive

    def tied_with(self, other: Evidence) -> bool:
        """Alike on ``exact`` and ``fit``, scores within ``AMBIGUITY_MARGIN`` of the higher one."""
        return (
            self.exact == other.exact
            and self.fit == other.fit
            and abs(self.score - other.score) <= AMBIGUITY_MARGIN * max(self.score, other.score)
        )


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def _words(text: str) -> list[str]:
    return [stem(word) for word in split_words(text)]


def named_by_query(query: str, tool: Tool) -> bool:
    """Whether the query names ``tool``: its id as a whole word, or the words of its id, name or an alias in
    order (stemmed, stopwords kept) when they are at least two words or the whole query."""
    if re.search(rf"(?<![\w-]){re.escape(tool.id)}(?![\w-])", query, flags=re.IGNORECASE):
        return True
    words = _words(query)
    for phrase in (tool.id, tool.name, *tool.aliases):
        needle = _words(phrase)
        if needle and (len(needle) >= 2 or words == needle) and _contains(words, needle):
            return True
    return False


def gather_evidence(
    query: str,
    result: SearchResult,
    *,
    collection: Collection,
    entities: Mapping[str, Any],
) -> list[Evidence]:
    """The evidence of every row of ``result``, in rank order."""
    tools = collection.by_id()
    out = []
    for row in result.rows:
        tool = tools.get(row.tool_id)
        exact = tool is not None and named_by_query(query, tool)
        fit = len(match_entities(tool, entities)[0]) if tool is not None and entities else 0
        mutation = _MUTATION_ORDER.get(tool.mutation, 0) if tool is not None else 0
        out.append(Evidence(row.tool_id, row.rank, row.score, exact, fit, mutation))
    return out


def _strong(c: Evidence, i: Evidence, n_entities: int) -> bool:
    """Whether challenger ``c`` has strong evidence over incumbent ``i``: never when only ``i`` is named by
    the query, else when one of these holds:

    1. *exact*: ``c`` is named by the query and ``i`` is not;
    2. *margin*: ``c.score >= (1 + OVERRIDE_MARGIN) * i.score`` and ``c.fit >= i.fit``;
    3. *fit*: entities were provided, ``c`` binds all of them, ``c.fit > i.fit`` and
       ``c.score >= FIT_SCORE_FLOOR * i.score``;
    4. *safety*: ``c`` ties with ``i`` and changes less (read-only, mutating, destructive): a tie in relevance
       must not resolve to a side effect.
    """
    if c.exact and not i.exact:
        return True
    if i.exact and not c.exact:
        return False
    if c.score >= (1.0 + OVERRIDE_MARGIN) * i.score and c.fit >= i.fit:
        return True
    if n_entities > 0 and c.fit == n_entities and c.fit > i.fit and c.score >= FIT_SCORE_FLOOR * i.score:
        return True
    return c.mutation < i.mutation and c.tied_with(i)


def _best(challengers: list[Evidence]) -> Evidence:
    return min(challengers, key=lambda e: (not e.exact, -e.fit, -e.score, e.mutation, e.rank))


def _tied(selected: Evidence, rows: list[Evidence]) -> list[str]:
    return [e.tool_id for e in rows if e.tool_id != selected.tool_id and e.tied_with(selected)]


def decide(evidence: list[Evidence], *, llm_target: str | None, n_entities: int) -> Selection:
    """The guardrails over precomputed evidence (rank order). Pure: the same inputs give the same Selection.

    No rows: nothing selected (``no_candidates``). An LLM target among the rows is kept (``llm_target_kept``)
    unless a challenger has strong evidence over it: the best one (named first, then most entities bound,
    then highest score, then rank) is selected, with ``llm_target_overridden`` +
    ``selected_by_strong_evidence``. With no LLM target (``no_llm_target``) or one outside the rows
    (``llm_target_not_in_top_k``, an override), the top row is the incumbent: a challenger with strong
    evidence is selected (``selected_by_strong_evidence``), else the top row (``selected_top_rank``).
    """
    codes: list[str] = []
    if llm_target is None:
        codes.append(NO_LLM_TARGET)
    incumbent = next((e for e in evidence if e.tool_id == llm_target), None)
    if llm_target is not None and incumbent is None:
        codes.append(LLM_TARGET_NOT_IN_TOP_K)
    if not evidence:
        codes.append(NO_CANDIDATES)
        return Selection(llm_target, None, llm_target is not None, tuple(codes))
    if incumbent is not None:
        challengers = [e for e in evidence if e is not incumbent and _strong(e, incumbent, n_entities)]
        if not challengers:
            return Selection(llm_target, incumbent.tool_id, False, (LLM_TARGET_KEPT,))
        selected = _best(challengers)
        codes += [LLM_TARGET_OVERRIDDEN, SELECTED_BY_STRONG_EVIDENCE]
    else:
        top = evidence[0]
        challengers = [e for e in evidence[1:] if _strong(e, top, n_entities)]
        selected = _best(challengers) if challengers else top
        codes.append(SELECTED_BY_STRONG_EVIDENCE if challengers else SELECTED_TOP_RANK)
    tied = _tied(selected, evidence)
    if tied:
        codes.append(AMBIGUOUS_CANDIDATES)
    return Selection(
        llm_target=llm_target,
        selected_target=selected.tool_id,
        overrode_llm=llm_target is not None and selected.tool_id != llm_target,
        reason_codes=tuple(codes),
        ambiguous=bool(tied),
        candidates=(selected.tool_id, *tied) if tied else (),
    )


def select(
    query: str,
    result: SearchResult,
    *,
    collection: Collection,
    entities: Mapping[str, Any],
    llm_target: str | None,
) -> Selection:
    """Pick the final target among ``result``'s rows (see the module docstring for the rules)."""
    evidence = gather_evidence(query, result, collection=collection, entities=entities)
    return decide(evidence, llm_target=llm_target, n_entities=len(entities))

"""A team's engine written in Python, loaded by the python engine tests as ``tests.engine.team_engine:...``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.collection.model import Collection
from qlab.engine.types import SearchResult, SearchRow


class KeywordEngine:
    """Ranks tools by how many query words their id contains; answers select and plan as plain dicts."""

    name = "keyword"

    def __init__(self, collection: Collection) -> None:
        self.ids = [t.id for t in collection.tools]

    def search(self, query: str, *, k: int) -> SearchResult:
        words = query.lower().split()
        scored = sorted(
            ((sum(w in i.lower() for w in words), i) for i in self.ids), key=lambda x: (-x[0], x[1])
        )
        rows = [SearchRow(i, rank, float(score)) for rank, (score, i) in enumerate(scored[:k], 1) if score]
        return SearchResult(tuple(rows))

    def select(
        self, query: str, result: SearchResult, *, entities: Mapping[str, Any], llm_target: str | None
    ) -> dict[str, Any]:
        top = result.rows[0].tool_id if result.rows else None
        return {
            "llm_target": llm_target,
            "selected_target": top,
            "overrode_llm": False,
            "reason_codes": ["team_rule"],
        }

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "plan_id": f"team-{target}",
            "status": "synthesized",
            "steps": [{"tool_id": target, "arguments": dict(entities)}],
        }


def make(collection: Collection) -> KeywordEngine:
    return KeywordEngine(collection)


INSTANCE = KeywordEngine(Collection(tools=()))


def broken_factory(collection: Collection) -> Any:
    raise RuntimeError("no model file")


class Incomplete:
    def search(self, query: str, *, k: int) -> Any:
        return "not a result"


def incomplete(collection: Collection) -> Incomplete:
    return Incomplete()


def wrong_types(collection: Collection) -> Any:
    class Wrong:
        name = "wrong"

        def search(self, query: str, *, k: int) -> Any:
            return "rows"

        def select(self, *a: Any, **kw: Any) -> Any:
            return {"selected_target": None, "overrode_llm": "no", "reason_codes": []}

        def plan(self, *a: Any, **kw: Any) -> Any:
            return None

    return Wrong()

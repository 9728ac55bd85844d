"""Project knowledge: query rewrites and entity defaults applied to every engine call; the file's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qlab.contracts.errors import QlabError
from qlab.engine.knowledge import Knowledge, KnowledgeEngine, load_knowledge, with_knowledge
from qlab.engine.types import Plan, SearchResult, Selection


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def search(self, query: str, *, k: int) -> SearchResult:
        self.calls.append(("search", query, {}))
        return SearchResult(rows=())

    def select(self, query: str, result: SearchResult, *, entities: Any, llm_target: str | None) -> Selection:
        self.calls.append(("select", query, dict(entities)))
        return Selection(llm_target=None, selected_target=None, overrode_llm=False, reason_codes=())

    def plan(self, query: str, target: str, *, entities: Any) -> Plan:
        self.calls.append(("plan", query, dict(entities)))
        return Plan(plan_id="p", status="failed")


def test_every_call_sees_the_rewritten_query_and_the_defaults() -> None:
    inner = Recorder()
    known = Knowledge({"parcel": "delivery", "parcel box": "locker"}, {"memberNo": "M-1", "locale": "en"})
    engine = KnowledgeEngine(inner, known)
    engine.search("Where is my Parcel? and the parcel box", k=3)
    engine.select("parcels", SearchResult(rows=()), entities={"memberNo": "M-2"}, llm_target=None)
    engine.plan("parcel", "t", entities={})
    assert inner.calls == [
        ("search", "Where is my delivery? and the locker", {}),  # whole words, any case, longest first
        (
            "select",
            "parcels",
            {"memberNo": "M-2", "locale": "en"},
        ),  # "parcels" is another word; the case wins
        ("plan", "delivery", {"memberNo": "M-1", "locale": "en"}),
    ]
    assert with_knowledge(inner, Knowledge()) is inner  # nothing to apply: the engine itself


def test_the_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.yaml"
    assert load_knowledge("knowledge.yaml", base_dir=tmp_path).empty  # not written yet: nothing learned
    path.write_text("query_rewrites:\n  parcel: delivery\nentity_defaults: {locale: en}\n", encoding="utf-8")
    known = load_knowledge("knowledge.yaml", base_dir=tmp_path)
    assert (dict(known.query_rewrites), dict(known.entity_defaults)) == (
        {"parcel": "delivery"},
        {"locale": "en"},
    )
    assert known.digest.startswith("sha256:")
    path.write_text("query_rewrites:\n  parcel: delivery\nrewrites: {}\n", encoding="utf-8")
    with pytest.raises(QlabError, match=r"knowledge.yaml:3:11: \$.rewrites: unknown section 'rewrites'"):
        load_knowledge("knowledge.yaml", base_dir=tmp_path)


def test_rank_of_sees_the_rewritten_query_with_or_without_the_inner_engines_rank_of() -> None:
    inner = Recorder()
    known = Knowledge({"parcel": "delivery"}, {})
    assert KnowledgeEngine(inner, known).rank_of("my parcel", k=3, target="t") is None
    assert inner.calls == [("search", "my delivery", {})]  # no rank_of inside: its search

    class Ranker(Recorder):
        def rank_of(self, query: str, *, k: int, target: str) -> int | None:
            self.calls.append(("rank_of", query, {"k": k, "target": target}))
            return 2

    ranker = Ranker()
    assert KnowledgeEngine(ranker, known).rank_of("my parcel", k=3, target="t") == 2
    assert ranker.calls == [("rank_of", "my delivery", {"k": 3, "target": "t"})]

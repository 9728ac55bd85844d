"""Learning: suggestions with evidence, shadow rank in memory, pending review, accept writes the aliases file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, plan_case, search_case
from governance.collections import IndexEngine, case, demo_collection
from qlab.contracts.errors import InputError, UsageError
from qlab.governance.learning import suggestions as store
from qlab.governance.learning.suggest import run_learning
from qlab.project.model import CollectionConfig, Config, LearningConfig
from qlab.project.schemas import validate
from qlab.project.yamlio import parse_yaml

PASSED = {"qualityGate": {"passed": True, "checks": []}}  # a sandbox eval whose quality gate passed
CASES = [
    case("c-1", "where is my parcel", "getMemberDeliveryDetail"),
    case("c-2", "parcel", "getLockerList"),
    case("c-3", "delivery detail", "getMemberDeliveryDetail"),
]


def _result() -> dict[str, Any]:
    return artifact(
        [
            search_case("c-1", rank=None, top=["getLockerList"], top_k=1),
            search_case("c-2", rank=1, top=["getLockerList"], top_k=1),
            search_case("c-3", rank=1, top=["getMemberDeliveryDetail"], top_k=1),
            plan_case("p-1", llm="getMemberDeliveryList"),  # overridden, and right
            plan_case("p-2", llm="getOrderList", selected="deleteOrder", correct=False),  # overridden, wrong
        ]
    )


def _learn(**extra: Any) -> dict[str, Any]:
    return run_learning(
        _result(), config=None, collection=demo_collection(), engine_factory=IndexEngine, cases=CASES, **extra
    )


def test_a_missed_query_suggests_the_words_the_tool_lacks_with_evidence() -> None:
    out = _learn()
    alias = [s for s in out["suggestions"] if s["kind"] == "alias"]
    assert len(alias) == 1
    suggestion = alias[0]
    assert suggestion["tool_id"] == "getMemberDeliveryDetail"
    assert suggestion["aliases"] == ["parcel"]  # where/is/my are stopwords
    assert suggestion["status"] == "pending_review"
    evidence = suggestion["evidence"][0]
    assert evidence["case_id"] == "c-1" and evidence["query"] == "where is my parcel"
    assert evidence["missing_terms"] == ["parcel"]
    assert evidence["top_rows"] == [{"tool_id": "getLockerList", "rank": 1, "score": 10.0}]
    # the id is a digest of what is suggested: the same suggestion from another run has the same id
    again = _learn()
    assert [s["id"] for s in again["suggestions"]] == [s["id"] for s in out["suggestions"]]


def test_selector_overrides_become_policy_notes() -> None:
    notes = {
        (s["llm_target"], s["selected_target"], s["outcome"]): s
        for s in _learn()["suggestions"]
        if s["kind"] == "selector_policy"
    }
    assert set(notes) == {
        ("getMemberDeliveryList", "getMemberDeliveryDetail", "right"),
        ("getOrderList", "deleteOrder", "wrong"),
    }
    wrong = notes[("getOrderList", "deleteOrder", "wrong")]
    assert wrong["status"] == "pending_review"
    assert wrong["evidence"][0]["case_id"] == "p-2"
    assert "was wrong" in wrong["text"]


def test_shadow_rank_reruns_affected_cases_in_memory_and_reports_the_change() -> None:
    collection = demo_collection()
    out = run_learning(_result(), config=None, collection=collection, engine_factory=IndexEngine, cases=CASES)
    shadow = out["shadow"]
    # c-1 and c-3 expect the tool that gets the alias; c-2's query shares its term
    assert shadow["cases"] == 3
    assert shadow["improved"] == ["c-1"]
    assert shadow["regressed"] == ["c-2"]  # "parcel" now ranks the detail above the lockers at k=1
    assert shadow["before"] == {
        "hit_at_k": pytest.approx(2 / 3, abs=1e-6),
        "top_1": pytest.approx(2 / 3, abs=1e-6),
        "mrr": pytest.approx(2 / 3, abs=1e-6),
    }
    assert shadow["delta"] == {"hit_at_k": 0.0, "top_1": 0.0, "mrr": 0.0}
    rows = {r["case_id"]: (r["before_rank"], r["after_rank"]) for r in shadow["rows"]}
    assert rows == {"c-1": (None, 1), "c-2": (1, None), "c-3": (1, 1)}
    alias = next(s for s in out["suggestions"] if s["kind"] == "alias")
    assert alias["shadow"]["regressed"] == ["c-2"]
    # nothing changed in memory either: the original tools have no aliases
    assert all(t.aliases == () for t in collection.tools)


def test_a_suggestion_holding_a_secret_is_withheld() -> None:
    out = _learn(secrets=["parcel"])
    assert out["scrub"] == {"passed": False, "withheld": 1}
    assert all(s["kind"] != "alias" for s in out["suggestions"])


def _config(tmp_path: Path) -> Config:
    return Config(
        version=1,
        project="demo",
        path=str(tmp_path / "qlab.yaml"),
        collection=CollectionConfig(sources=(), aliases_file="gates/aliases.yaml"),
        engine=None,  # type: ignore[arg-type]
        environments={},
        auth_profiles={},
        suites={},
        gates=(),
        learning=LearningConfig(suggestions_file=".qlab/suggestions.json"),
    )


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_suggestions_never_change_a_file_without_accept(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "qlab.yaml").write_text("version: 1\n", encoding="utf-8")
    aliases = tmp_path / "gates" / "aliases.yaml"
    aliases.parent.mkdir()
    aliases.write_text(
        "# reviewed by the search team\ngetOrderList:\n  - purchase history  # by bob\n", encoding="utf-8"
    )
    before = _snapshot(tmp_path)

    out = _learn()
    assert _snapshot(tmp_path) == before  # generating and shadow-ranking writes nothing

    path = store.suggestions_path(config)
    store.save(path, out["suggestions"], now="2026-12-01T10:00:00Z")
    after_save = _snapshot(tmp_path)
    assert {k: v for k, v in after_save.items() if k != ".qlab/suggestions.json"} == before
    assert all(s["status"] == "pending_review" for s in store.load(path))

    alias_id = next(s["id"] for s in out["suggestions"] if s["kind"] == "alias")
    with pytest.raises(InputError, match="cannot be published: it has no sandbox eval yet"):
        store.accept(config, alias_id[:8], by="alice")
    assert _snapshot(tmp_path) == after_save
    # the sandbox eval itself is tested on a real project (tests/governance/learning/test_sandbox.py)
    review = store.accept(config, alias_id[:8], by="alice", now="2026-12-02T09:30:00Z", sandbox=PASSED)
    assert review.written == ("parcel",)
    text = aliases.read_text(encoding="utf-8")
    assert text == (
        "# reviewed by the search team\n"
        "getOrderList:\n"
        "  - purchase history  # by bob\n"
        "getMemberDeliveryDetail:\n"
        f"  - parcel  # accepted by alice at 2026-12-02T09:30:00Z (suggestion {alias_id})\n"
    )
    assert parse_yaml(text, "aliases.yaml").data == {
        "getOrderList": ["purchase history"],
        "getMemberDeliveryDetail": ["parcel"],
    }
    stored = {s["id"]: s for s in store.load(path)}[alias_id]
    assert (stored["status"], stored["accepted_by"], stored["accepted_at"]) == (
        "accepted",
        "alice",
        "2026-12-02T09:30:00Z",
    )
    assert validate(json.loads(path.read_text()), "suggestions") == []

    # a later run's save refreshes nothing of a reviewed suggestion
    store.save(path, _learn()["suggestions"], now="2026-12-03T00:00:00Z")
    assert {s["id"]: s for s in store.load(path)}[alias_id] == stored
    with pytest.raises(UsageError, match="already accepted"):
        store.accept(config, alias_id, by="carol")


def test_accept_appends_to_an_existing_block_list_and_keeps_comments(tmp_path: Path) -> None:
    from qlab.governance.learning.aliases_file import add_aliases

    path = tmp_path / "aliases.yaml"
    path.write_text(
        "# top\ngetMemberDeliveryDetail:  # detail\n  - delivery info\n\ngetOrderList: [orders]\n",
        encoding="utf-8",
    )
    assert add_aliases(path, "getMemberDeliveryDetail", ["parcel", "delivery info"], comment="ok\nx: 1") == [
        "parcel"
    ]
    assert add_aliases(path, "getOrderList", ["purchases"], comment="ok") == ["purchases"]
    text = path.read_text(encoding="utf-8")
    assert text.startswith(
        "# top\ngetMemberDeliveryDetail:  # detail\n  - delivery info\n  - parcel  # ok x: 1\n"
    )
    assert parse_yaml(text, "a.yaml").data == {
        "getMemberDeliveryDetail": ["delivery info", "parcel"],
        "getOrderList": ["orders", "purchases"],
    }


def test_reject_records_the_decision_and_writes_no_alias(tmp_path: Path) -> None:
    config = _config(tmp_path)
    path = store.suggestions_path(config)
    store.save(path, _learn()["suggestions"])
    alias_id = next(s["id"] for s in store.load(path) if s["kind"] == "alias")
    store.reject(config, alias_id, by="bob", reason="too generic")
    assert not (tmp_path / "gates" / "aliases.yaml").exists()
    assert [s["status"] for s in store.load(path)].count("rejected") == 1
    with pytest.raises(UsageError, match="no suggestion 'nope'"):
        store.accept(config, "nope", by="x")


def test_accept_into_the_demo_aliases_file_with_flow_lists(tmp_path: Path) -> None:
    from qlab.governance.learning.aliases_file import add_aliases

    demo = Path(__file__).resolve().parents[3] / "gates" / "aliases.yaml"
    path = tmp_path / "aliases.yaml"
    path.write_text(demo.read_text(encoding="utf-8"), encoding="utf-8")
    before = parse_yaml(path.read_text(encoding="utf-8"), "a.yaml").data
    assert add_aliases(path, "trackDelivery", ["parcel tracking"], comment="accepted by alice") == [
        "parcel tracking"
    ]
    assert add_aliases(path, "newTool", ["brand new"], comment="accepted by bob") == ["brand new"]
    text = path.read_text(encoding="utf-8")
    after = parse_yaml(text, "a.yaml").data
    assert after == {
        **before,
        "trackDelivery": [*before["trackDelivery"], "parcel tracking"],
        "newTool": ["brand new"],
    }
    assert "  - parcel tracking  # accepted by alice\n" in text
    # the reviewers' header and every other entry stay as they were written
    assert text.startswith(demo.read_text(encoding="utf-8").split("trackDelivery:")[0])
    assert "rescheduleDelivery: [change delivery date, postpone delivery" in text


def test_the_suggestions_file_is_one_suggestion_per_line_and_reads_back_as_written(tmp_path: Path) -> None:
    """Rule: the file holds exactly what was saved (any text: quotes, newlines, non-ASCII, numbers) as valid JSON
    with one suggestion per line, so a diff of two runs' files shows changed suggestions line by line."""
    path = tmp_path / ".qlab" / "suggestions.json"
    items = [
        {
            "id": "a1",
            "kind": "alias",
            "text": 'say "hi"\nthen\tgo caf\u00e9 \u2603',
            "aliases": ["x", "y"],
            "n": 1.5,
        },
        {"id": "b2", "kind": "selector_policy", "text": "", "evidence": [{"case_id": "c", "rank": None}]},
    ]
    store.write(path, items)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == {"version": store.VERSION, "suggestions": items}
    lines = text.splitlines()
    assert [json.loads(line.strip().rstrip(",")) for line in lines[3:5]] == items
    assert store.load(path) == items
    store.write(path, [])
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": store.VERSION, "suggestions": []}


def test_only_the_cases_an_alias_may_help_are_read_unless_an_alias_is_suggested() -> None:
    """Rule: ``case_inputs(only=...)`` reads just those cases; the learning loop reads every case's input only
    when it has an alias to measure (shadow rank reruns them), so a large passing run holds none of them."""
    from qlab.governance.learning import suggest

    inputs = suggest.case_inputs(_result(), CASES, only={"c-1"})
    assert list(inputs) == ["c-1"] and inputs["c-1"].query == "where is my parcel"
    assert set(suggest.case_inputs(_result(), CASES)) == {"c-1", "c-2", "c-3"}
    read: list[int] = []
    real = suggest.case_inputs

    def counting(*args: Any, **kw: Any) -> Any:
        found = real(*args, **kw)
        read.append(len(found))
        return found

    passing = artifact([search_case("c-2", rank=1, top=["getLockerList"], top_k=1)])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(suggest, "case_inputs", counting)
        suggest.run_learning(passing, config=None, collection=demo_collection(), engine_factory=IndexEngine,
                             cases=CASES)  # fmt: skip
        assert read == [0]  # nothing missed: no input read, no shadow rank
        read.clear()
        _learn()
        assert read == [1, 3]  # the miss first, then every case for the alias's shadow rank

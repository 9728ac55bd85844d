"""Proposals from signals: a query rewrite (memory), policy changes (budget, stop condition, guard mode) and a
regression case (eval case), each pending review with a stable id."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from governance.builders import artifact, make_project, search_case
from qlab.governance.env import collection_and_engines
from qlab.governance.learning import proposers
from qlab.governance.learning.suggest import run_learning
from qlab.project import load_project


def _alias(tool: str, word: str, case_id: str) -> dict[str, object]:
    return {"kind": "alias", "tool_id": tool, "aliases": [word],
            "evidence": [{"case_id": case_id, "missing_terms": [word]}]}  # fmt: skip


def test_a_word_that_misses_two_tools_becomes_a_rewrite_to_the_word_they_share(tmp_path: Path) -> None:
    config = load_project(make_project(tmp_path)).config
    collection, _ = collection_and_engines(config)
    aliases = [
        _alias("trackDelivery", "consignment", "c-1"),
        _alias("getMemberDeliveryList", "consignment", "c-2"),
    ]
    (rewrite,) = proposers.query_rewrites(aliases, collection, "run-1")
    assert (rewrite["type"], rewrite["kind"], rewrite["signal"]) == ("memory", "query_rewrite", "search_miss")
    assert rewrite["change"] == {"query_rewrites": {"consignment": "delivery"}}
    assert [e["case_id"] for e in rewrite["evidence"]] == ["c-1", "c-2"]
    assert proposers.query_rewrites(aliases[:1], collection, "run-1") == []  # one tool: an alias is enough
    again = proposers.query_rewrites(aliases, collection, "run-2")
    assert again[0]["id"] == rewrite["id"] and rewrite["status"] == "pending_review"


def test_a_breached_budget_is_raised_to_cover_what_the_run_used() -> None:
    signal = {"evidence": {"budget": {"max_duration_sec": 5, "max_llm_cost_usd": 0.1},
                           "used": {"duration_sec": 9.2, "llm_cost_usd": 0.05, "llm_tokens": 0}}}  # fmt: skip
    (budget,) = proposers.budget_raise(signal, "run-1")
    assert (budget["type"], budget["change"]) == ("policy", {"budget": {"max_duration_sec": 20}})
    assert proposers.budget_raise({"evidence": {"budget": {}, "used": {}}}, "run-1") == []


def _gated(tmp_path: Path) -> Path:
    """The project with a build gate first and an execute gate last (no stop conditions)."""
    path = make_project(tmp_path)
    text = path.read_text().replace("gates:\n", "gates:\n  - name: build\n    stage: build\n", 1)
    text = text.replace("learning:\n", "  - name: execute\n    stage: execute\nlearning:\n", 1)
    path.write_text(text, encoding="utf-8")
    return path


def test_drift_stops_where_the_gate_does_not_yet(tmp_path: Path) -> None:
    config = load_project(_gated(tmp_path)).config
    auth = {"evidence": {"kind": "auth"}, "text": "drift"}
    coverage = {"evidence": {"kind": "readiness", "schema_coverage_before": 0.957}, "text": "fell"}
    stops = proposers.drift_stops([auth, coverage], config, "run-1")
    assert [p["change"] for p in stops] == [
        {"gate": "execute", "add_stop_if": "auth_not_ready"},
        {"gate": "build", "add_stop_if": {"schema_coverage_below": 0.95}},
    ]


def test_a_guard_that_only_warned_is_proposed_to_block(tmp_path: Path) -> None:
    config = load_project(_gated(tmp_path)).config
    signal = {"evidence": {"guards": [
        {"guard": "citation_coverage", "stage": "execute", "mode": "warn", "message": "e-1: 0.5 < 1"},
        {"guard": "scrub", "stage": "learn", "mode": "block", "message": "leak"},  # blocks already
    ]}}  # fmt: skip
    (block,) = proposers.guard_blocks(signal, config, "run-1")
    assert block["change"] == {"gate": "execute", "guard": "citation_coverage", "mode": "block"}


def test_a_case_fixed_since_the_previous_run_becomes_an_eval_case_proposal(tmp_path: Path) -> None:
    config_path = make_project(tmp_path)
    project = load_project(config_path)
    collection, factory = collection_and_engines(project.config)
    before = {
        **artifact([search_case("s-parcel", rank=None)], run_id="run-1"),
        "_digest": "sha256:" + "a" * 64,
    }
    now = artifact([search_case("s-parcel", rank=1)], run_id="run-2")
    out = run_learning(now, config=project.config, collection=collection, engine_factory=factory,
                       cases=project.cases, previous=before)  # fmt: skip
    assert [s["signal"] for s in out["signals"]] == ["failed_then_succeeded"]
    (case,) = [p for p in out["suggestions"] if p["kind"] == "eval_case"]
    assert (case["type"], case["signal"], case["change"]["case_id"]) == (
        "eval_case",
        "failed_then_succeeded",
        "s-parcel",
    )
    made = case["proposal"]
    assert made["status"] == "pending_review" and made["case"]["id"] == "reg-s-parcel"
    assert made["source"]["result_digest"] == "sha256:" + "a" * 64 and made["corrected"]["run_id"] == "run-2"
    assert made["key_difference"]["stage"] == "search"


def test_a_fixed_case_proposed_from_the_previous_run_read_lean_is_the_one_read_whole(tmp_path: Path) -> None:
    """Rule: the learn gate reads the previous run cut to the comparison fields (``history.for_learning``); the
    case it proposes is then read again whole from that file, so the proposal is the one the whole file gives."""
    from qlab.run.artifact import write
    from qlab.run.history import previous_result as _previous

    config_path = make_project(tmp_path)
    project = load_project(config_path)
    collection, factory = collection_and_engines(project.config)
    before = artifact([search_case("s-parcel", rank=None)], run_id="run-1")
    path = write(tmp_path / "out" / "result.json", before)
    now = artifact([search_case("s-parcel", rank=1)], run_id="run-2")
    lean = _previous(path, needed=False, wanted=True)
    assert lean is not None and lean.get("_lean")
    whole = {**before, "_path": lean["_path"]}
    assert "search" not in lean["cases"][0] and "search" in whole["cases"][0]  # the lean read cut the record
    made = [
        run_learning(
            now,
            config=project.config,
            collection=collection,
            engine_factory=factory,
            cases=project.cases,
            previous=previous,
        )
        for previous in (lean, whole)
    ]
    proposals = [[p for p in out["suggestions"] if p["kind"] == "eval_case"] for out in made]
    assert proposals[0] and proposals[0] == proposals[1]
    assert proposals[0][0]["proposal"]["key_difference"]["stage"] == "search"


def test_a_rewrite_names_five_tools_and_counts_the_rest(tmp_path: Path) -> None:
    """Its text is copied into every case it names: a regressed run's rewrite listed all 651 tools in each of
    1,196 cases (25 KB a case, half a GB of result.json)."""
    config = load_project(make_project(tmp_path)).config
    collection, _ = collection_and_engines(config)
    many = [t for t in collection.tools if "deliver" in f"{t.id} {t.summary}".lower()]
    assert len(many) >= 2
    wide = replace(collection, tools=tuple(many) + tuple(
        replace(many[0], id=f"{many[0].id}{i}") for i in range(7)
    ))  # fmt: skip
    aliases = [_alias(t.id, "consignment", f"c-{i}") for i, t in enumerate(wide.tools)]
    (rewrite,) = proposers.query_rewrites(aliases, wide, "run-1")
    ids = sorted(t.id for t in wide.tools)
    assert f"of {len(ids)} tools ({', '.join(ids[:5])} and {len(ids) - 5} more) missed" in rewrite["text"]
    assert len(rewrite["evidence"]) == len(ids)  # every case is still in the evidence
    (few,) = proposers.query_rewrites(aliases[:2], wide, "run-1")
    assert f"({', '.join(sorted(t.id for t in wide.tools[:2]))}) missed" in few["text"]


def test_a_correction_that_gave_an_entity_the_plan_asked_for_becomes_an_entity_default(
    tmp_path: Path,
) -> None:
    """entity_default memory proposals were never made. A person edited a plan case to give memberNo, which the
    failing run's plan had asked the user for; it passes now: remember that value as memberNo's default."""
    from governance.builders import plan_case

    project = load_project(make_project(tmp_path))
    config = project.config
    collection, factory = collection_and_engines(config)
    asked = {"plan_id": "p", "status": "needs_input", "tools": ["getMember"], "steps": [],
             "user_input_slots": [{"tool_id": "getMember", "parameter": "memberNo", "location": "path"}]}  # fmt: skip
    failed = plan_case("p-member", status="failed", plan=asked,
                       failure={"stage": "plan", "reason": "required_fields_unsatisfied", "message": "memberNo"})  # fmt: skip
    before = artifact([failed], run_id="run-1")
    now = artifact([plan_case("p-member", selected="getMember", tools=["getMember"])], run_id="run-2")
    for run, digest in ((before, "sha256:a"), (now, "sha256:b")):  # the case file was edited between the runs
        run["provenance"]["dataset"]["files"] = [{"path": failed["file"], "digest": digest}]
    case = replace(
        next(c for c in project.cases if c.id == "s-parcel"),
        id="p-member",
        mode="plan",
        suite="regression",
        provided_entities={"memberNo": "M-1001"},
    )
    out = run_learning(now, config=config, collection=collection, engine_factory=factory, cases=[case],
                       previous=before, decisions=[])  # fmt: skip
    (default,) = [s for s in out["suggestions"] if s["kind"] == "entity_default"]
    assert (default["type"], default["signal"]) == ("memory", "user_correction")
    assert default["change"] == {"entity_defaults": {"memberNo": "M-1001"}}
    assert default["evidence"] == [
        {"case_id": "p-member", "entity": "memberNo", "value": "M-1001", "asked_by": "getMember"}
    ]

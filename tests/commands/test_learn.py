"""``qlab learn`` in process: list, sandbox, accept (writes the reviewed aliases file), reject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.builders import make_project
from qlab.cli import main
from qlab.governance.records import write_json
from qlab.project import load_project

SUGGESTION = {
    "id": "sg-0123456789ab",
    "kind": "alias",
    "status": "pending_review",
    "tool_id": "trackDelivery",
    "aliases": ["parcel"],
    "text": "Add alias 'parcel' to trackDelivery",
    "run_id": "run-7",
    "evidence": [{"case_id": "s-parcel", "query": "where is my parcel", "missing_terms": ["parcel"]}],
}
NOTE = {
    "id": "sg-ba9876543210",
    "kind": "selector_policy",
    "status": "pending_review",
    "llm_target": "a",
    "selected_target": "b",
    "outcome": "right",
    "text": "The selector overrode a with b",
    "evidence": [],
}


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _setup(tmp_path: Path) -> Path:
    """The project, its two pending proposals, and the last run's result (the sandbox replays its cases)."""
    from governance.builders import artifact, search_case, write

    config = make_project(tmp_path, aliases="getMemberDeliveryList:\n  - my deliveries\n")
    write_json(tmp_path / ".qlab" / "suggestions.json", {"version": 1, "suggestions": [SUGGESTION, NOTE]})
    (tmp_path / ".qlab" / "out").mkdir(parents=True)
    miss = search_case("s-parcel", rank=None, top=["listCarriers"], top_k=5)
    write(tmp_path / ".qlab" / "out" / "result.json", artifact([miss]))
    return config


def test_list_accept_and_reject(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _setup(tmp_path)
    code, out, err = _cli(["learn", "list", "--config", str(config)], capsys)
    assert code == 0, err
    assert "sg-0123456789ab  pending_review  collection_metadata (alias, signal -)" in out
    assert "change:   aliases of trackDelivery += 'parcel'" in out and "sandbox:  not run yet" in out

    code, out, err = _cli(["learn", "accept", "sg-0123", "--by", "alice", "--config", str(config)], capsys)
    assert code == 0, err
    assert err == "running the sandbox eval of sg-0123456789ab first\n"
    assert "added 'parcel' to gates/aliases.yaml" in out
    text = (tmp_path / "gates" / "aliases.yaml").read_text()
    assert "trackDelivery:\n  - parcel  # accepted by alice at " in text
    # the collection loader (the project's reference check) still accepts the file
    assert load_project(config).config.collection.aliases_file == "gates/aliases.yaml"

    code, out, _ = _cli(
        ["learn", "reject", "sg-ba98", "--by", "bob", "--reason", "noise", "--config", str(config)], capsys
    )
    assert code == 0 and "rejected sg-ba9876543210" in out
    stored = {
        s["id"]: s for s in json.loads((tmp_path / ".qlab" / "suggestions.json").read_text())["suggestions"]
    }
    assert stored["sg-0123456789ab"]["accepted_by"] == "alice"
    assert stored["sg-ba9876543210"]["reject_reason"] == "noise"

    code, out, _ = _cli(["learn", "list", "--config", str(config)], capsys)
    assert code == 0 and "no pending review proposals" in out
    code, out, _ = _cli(["learn", "list", "--status", "all", "--json", "--config", str(config)], capsys)
    assert {s["status"] for s in json.loads(out)} == {"accepted", "rejected"}


def test_accept_names_the_promotion_that_confirms_the_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _setup(tmp_path)
    code, out, err = _cli(["learn", "accept", "sg-0123", "--by", "alice", "--config", str(config)], capsys)
    assert code == 0, err
    assert "--baseline <the result of run run-7>" in out
    assert "--change learning_suggestion_promotion" in out
    code, out, err = _cli(["learn", "accept", "sg-ba98", "--by", "alice", "--config", str(config)], capsys)
    assert code == 0, err
    assert "--change selector_override_policy" in out and "learning_suggestion_promotion" not in out


def test_accept_twice_or_an_unknown_id_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _setup(tmp_path)
    assert (
        _cli(["learn", "accept", "sg-0123456789ab", "--by", "alice", "--config", str(config)], capsys)[0] == 0
    )
    code, _, err = _cli(
        ["learn", "accept", "sg-0123456789ab", "--by", "bob", "--config", str(config)], capsys
    )
    assert code == 2 and "already accepted (by alice)" in err
    code, _, err = _cli(["learn", "accept", "sg-ffff", "--by", "bob", "--config", str(config)], capsys)
    assert code == 2 and "no suggestion 'sg-ffff'" in err


def test_sandbox_shows_a_and_b_side_by_side_and_a_failed_quality_gate_blocks_publishing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _setup(tmp_path)
    aliases = tmp_path / "gates" / "aliases.yaml"
    before = aliases.read_text()
    code, out, err = _cli(["learn", "sandbox", "sg-0123", "--config", str(config)], capsys)
    assert code == 0, err
    assert (
        "A (as is)   B (with it)" in out
        and "correctness                    0.000         1.000    +1.000" in out
    )
    assert "improvementCheck: passed (s-parcel)" in out and "quality gate:     PASSED" in out
    assert aliases.read_text() == before  # the sandbox applied nothing
    stored = json.loads((tmp_path / ".qlab" / "suggestions.json").read_text())["suggestions"][0]
    assert stored["sandbox"]["scorecardDelta"]["correctness"] == 1.0
    assert set(stored["sandbox"]) >= {"regressionCheck", "improvementCheck", "costDelta", "latencyDelta"}
    # a proposal whose quality gate failed is not published, whoever accepts it
    stored["sandbox"]["qualityGate"] = {
        "passed": False,
        "checks": [{"name": "regression_evals", "passed": False}],
    }
    write_json(tmp_path / ".qlab" / "suggestions.json", {"version": 1, "suggestions": [stored, NOTE]})
    code, _, err = _cli(["learn", "accept", "sg-0123", "--by", "alice", "--config", str(config)], capsys)
    assert code == 2 and "cannot be published: its quality gate failed (regression_evals)" in err
    assert aliases.read_text() == before


def _files(root: Path) -> dict[str, bytes]:
    # .qlab/ holds qlab's own state (the collection cache, the suggestions file), not project files
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".qlab" not in p.parts
    }


def test_shadow_stores_pending_suggestions_and_changes_no_project_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from governance.builders import artifact, search_case, write

    config = make_project(tmp_path, aliases="getMember:\n  - member profile\n")
    miss = search_case("s-parcel", rank=None, top=["listCarriers"], top_k=5)
    (tmp_path / ".qlab").mkdir()
    result = write(tmp_path / ".qlab" / "result.json", artifact([miss]))
    before = _files(tmp_path)
    code, out, err = _cli(["learn", "shadow", "--result", str(result), "--config", str(config)], capsys)
    assert code == 0, err
    assert "signals:\n  search_miss: 1 case(s) missed their expected tool in the Top-K" in out
    assert "aliases of trackDelivery += 'parcel'" in out
    assert "shadow rank over" in out and "improved s-parcel" in out
    assert _files(tmp_path) == before
    stored = json.loads((tmp_path / ".qlab" / "suggestions.json").read_text())["suggestions"]
    assert [(s["tool_id"], s["aliases"], s["status"]) for s in stored] == [
        ("trackDelivery", ["parcel"], "pending_review")
    ]
    assert stored[0]["shadow"]["improved"] == ["s-parcel"]


def test_the_shadow_line_says_when_not_every_suggestion_was_measured_alone() -> None:
    from qlab.commands.learn import _shadow_text

    shadow = {
        "cases": 4,
        "before": {"hit_at_k": 0.5, "top_1": 0.25, "mrr": 0.4},
        "after": {"hit_at_k": 0.75, "top_1": 0.5, "mrr": 0.6},
        "improved": ["c-1"],
        "regressed": [],
        "alone": {"measured": 50, "of": 120},
    }
    assert _shadow_text(shadow).endswith(
        "; 50 of 120 suggestions measured alone (the first made, within the rerun budget)"
    )
    assert "measured alone" not in _shadow_text({**shadow, "alone": {"measured": 3, "of": 3}})


@pytest.mark.parametrize(
    "name", ["../../../outside/evil", "{outside}/abs-evil", "x/../../../../outside/evil2"]
)
def test_a_tampered_suggestion_writes_nowhere_outside_its_folder(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An eval_case suggestion whose proposal id is a path (``../``, absolute) wrote JSON there before anything
    was validated; now it is refused (exit 2, the suggestion and the id named) and nothing is written."""
    project = tmp_path / "project"
    project.mkdir()
    config = _setup(project)
    outside = tmp_path / "outside"
    tampered = {
        "id": "sg-0000000000ee",
        "kind": "eval_case",
        "status": "pending_review",
        "evidence": [],
        "sandbox": {"qualityGate": {"passed": True, "checks": []}},  # forged too
        "proposal": {"id": name.format(outside=outside), "status": "pending_review", "case": {"id": "x"}},
    }
    suggestions = project / ".qlab" / "suggestions.json"
    write_json(suggestions, {"version": 1, "suggestions": [tampered]})
    before = suggestions.read_bytes(), _files(project)
    code, _, err = _cli(
        ["learn", "accept", "sg-0000000000ee", "--by", "eve", "--config", str(config)], capsys
    )
    assert code == 2, err
    assert "suggestion sg-0000000000ee: $.proposal.id" in err and "leads outside" in err
    assert not outside.exists() and not list(tmp_path.glob("*.json"))
    assert (suggestions.read_bytes(), _files(project)) == before


def test_an_invalid_proposal_in_a_suggestion_is_refused_before_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _setup(tmp_path)
    tampered = {
        "id": "sg-0000000000ff",
        "kind": "eval_case",
        "status": "pending_review",
        "evidence": [],
        "sandbox": {"qualityGate": {"passed": True, "checks": []}},
        "proposal": {"id": "prop-0123456789ab", "status": "pending_review"},
    }
    write_json(tmp_path / ".qlab" / "suggestions.json", {"version": 1, "suggestions": [tampered]})
    before = _files(tmp_path)
    code, _, err = _cli(
        ["learn", "accept", "sg-0000000000ff", "--by", "eve", "--config", str(config)], capsys
    )
    assert code == 2 and "suggestion sg-0000000000ff: not a valid regression case proposal" in err, err
    assert _files(tmp_path) == before


def test_accept_refuses_a_proposal_whose_sandbox_shows_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule: an alias that fixes the miss but sends another case elsewhere is refused, the case named, and
    nothing is written (the execute case never ran in the stored run: it is judged on the stages replayed)."""
    from governance.builders import STEALING_ALIAS, blocked_at_search, honest_project, write

    config = honest_project(tmp_path, plan_cases=False)
    write_json(tmp_path / ".qlab" / "suggestions.json", {"version": 1, "suggestions": [STEALING_ALIAS]})
    (tmp_path / ".qlab" / "out").mkdir(parents=True)
    write(tmp_path / ".qlab" / "out" / "result.json", blocked_at_search("e-order"))
    aliases = (tmp_path / "gates" / "aliases.yaml").read_text()
    code, out, err = _cli(
        ["learn", "accept", STEALING_ALIAS["id"], "--by", "alice", "--config", str(config)], capsys
    )
    assert code == 2, out + err
    assert "cannot be published: its sandbox eval shows a regression: e-order (passed through plan" in err
    assert (tmp_path / "gates" / "aliases.yaml").read_text() == aliases
    code, out, _ = _cli(["learn", "list", "--config", str(config)], capsys)
    assert "regressionCheck:  FAILED; e-order passed through plan (execute not replayed) → failed" in out

"""``qlab search`` in-process: the score breakdown table, --json, -k, --spec, corrections, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .engine_project import DEMO_SPEC, project, run


def test_table_with_the_score_breakdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path)
    code, out, err = run(
        ["search", "Find member delivery detail", "-k", "3", "--config", str(config)], capsys
    )
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "query: Find member delivery detail"
    assert lines[1] == "engine: builtin   terms: member deliveri detail"
    header = lines[3].split()
    assert header[:3] == ["#", "tool", "score"] and header[-1] == "matched"
    assert {"id", "summary", "path"} <= set(header)
    assert lines[4].split()[:2] == ["1", "getMemberDeliveryDetail"]
    assert lines[4].endswith("member deliveri detail")
    assert len(lines) == 7  # three rows


def test_json_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path)
    code, out, _ = run(["search", "trak my delivry", "--json", "--config", str(config)], capsys)
    assert code == 0
    data = json.loads(out)
    assert (data["query"], data["k"], data["engine"]) == ("trak my delivry", 8, "builtin")
    assert data["rows"][0]["corrections"] == {"delivry": "delivery"}
    assert data["query_terms"] == ["deliveri"]
    assert all(
        set(r) == {"tool_id", "rank", "score", "field_scores", "matched_terms", "corrections"}
        for r in data["rows"]
    )


def test_spec_without_a_project(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["search", "cancel an order", "-k", "2", "--spec", str(DEMO_SPEC)], capsys)
    assert code == 0
    assert out.splitlines()[4].split()[:2] == ["1", "cancelOrder"]


def test_corrections_and_no_match_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["search", "delivry", "--spec", str(DEMO_SPEC)], capsys)
    assert "corrected: delivry -> delivery" in out.splitlines()
    code, out, _ = run(["search", "the of and", "--spec", str(DEMO_SPEC)], capsys)
    assert code == 0 and out.rstrip().endswith("no tool matched")


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "x", "--spec", str(tmp_path / "missing.yaml")], capsys)
    assert code == 2 and "missing.yaml" in err
    code, _, err = run(["search", "x", "-k", "0", "--spec", str(DEMO_SPEC)], capsys)
    assert code == 2
    config = project(tmp_path, engine="engine: {type: nonsense}")
    code, _, err = run(["search", "x", "--config", str(config)], capsys)
    assert code == 2, err


def test_explain_shows_how_the_query_was_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Framing and values left out, the intent with its methods, each word's match, and the new signals as
    columns of the breakdown."""
    config = project(tmp_path)
    code, out, err = run(
        ["search", "I need to remove the order 12", "--explain", "-k", "2", "--config", str(config)], capsys
    )
    assert code == 0, out + err
    assert "framing (left out): i need to" in out
    assert "values (weak, at value_weight): 12" in out
    assert "intent: delete (from 'remove'): DELETE operations get the method prior" in out
    assert "  remove: not in the collection; matched through synonyms delet" in out  # no aliases here
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("#  tool")).split()
    assert "intent" in header
    assert next(line for line in lines if line.startswith("1  ")).split()[1] == "cancelOrder"


def test_explain_says_the_scope_and_the_breakdown_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    code, out, err = run(["search", "list all the orders", "--explain", "--config", str(config)], capsys)
    assert code == 0, out + err
    assert "scope: collection: those on a collection's path get it twice" in out
    header = next(line for line in out.splitlines() if line.startswith("#  tool")).split()
    assert "scope" in header


def test_explain_without_a_verb_says_there_is_no_intent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    code, out, _ = run(["search", "order", "--explain", "--config", str(config)], capsys)
    assert code == 0
    assert "intent: none (no verb or question word says one): no method prior" in out


def test_a_hybrid_config_without_the_semantic_extra_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from qlab.engine import semantic

    def missing() -> None:
        raise ModuleNotFoundError("No module named 'wordllama'", name="wordllama")

    monkeypatch.setattr(semantic, "_imports", missing)
    config = project(tmp_path, engine="engine:\n  type: hybrid")
    code, out, err = run(["search", "track my parcel", "--config", str(config)], capsys)
    assert code == 2, out + err
    assert "pip install 'qualitylab[semantic]'" in err and "Traceback" not in err

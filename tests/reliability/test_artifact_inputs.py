"""Result artifacts and other JSON a user hands to qlab are bad input too: ``qlab report``, ``qlab merge``,
``qlab promote`` and ``qlab run --durations`` given random JSON, random bytes, deep nesting or structural
mutations of a real result artifact exit 0, 1 or 2 with the file named — never 3, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artifact_samples import as_written, result
from qlab.cli import main
from qlab.project.scaffold import demo_files
from reliability.generators import BYTES, SETTINGS, deep, documents, note_outcome, to_json, tree_mutation

REAL = as_written(result())  # a complete result artifact, as qlab run writes it


def run_cli(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        main(list(args))
    code = exit_.value.code
    return (code if isinstance(code, int) else 0), err.getvalue()


def assert_clean(code: int, stderr: str, file: Path, *, verdicts: tuple[str, ...] = ()) -> None:
    """Exit 0/1/2 only; an exit 2 names the file, or is one of the command's own ``verdicts``."""
    assert code in (0, 1, 2), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    if code == 2:
        assert file.name in stderr or any(v in stderr for v in verdicts), stderr
    note_outcome(f"exit {code}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("artifacts")
    (root / "qlab.yaml").write_text(
        "version: 1\nproject: p\ncollection: {sources: [{name: d, openapi: openapi.yaml}]}\n"
        "suites: {s: {mode: search, cases: [cases/*.yaml]}}\ngates: [{name: search, stage: search, suites: [s]}]\n",
        encoding="utf-8",
    )
    (root / "openapi.yaml").write_bytes(demo_files()["openapi.yaml"])
    (root / "cases").mkdir()
    (root / "cases" / "a.yaml").write_text(
        "- {id: a, query: look up member M-1001, expected_target: getMember}\n"
    )
    return root


CONTENT = (
    documents(to_json)
    | deep(json_only=True)
    | BYTES
    | tree_mutation(REAL, to_json)
    | st.just(json.dumps(REAL).encode())
)


@SETTINGS
@given(content=CONTENT)
def test_qlab_report_on_any_result_file(folder: Path, content: bytes) -> None:
    path = folder / "result.json"
    path.write_bytes(content)
    code, err = run_cli("report", str(path), "--markdown", str(folder / "summary.md"))
    assert_clean(code, err, path)


@SETTINGS
@given(content=CONTENT)
def test_qlab_merge_on_any_shard_file(folder: Path, content: bytes) -> None:
    path = folder / "qlab-shard-1-of-1.json"
    path.write_bytes(content)
    code, err = run_cli("merge", str(path), "--out", str(folder / "merged"), "--quiet")
    assert_clean(code, err, path)


@SETTINGS
@given(content=CONTENT)
def test_qlab_promote_on_any_candidate(folder: Path, content: bytes) -> None:
    baseline, candidate = folder / "baseline.json", folder / "candidate.json"
    baseline.write_text(json.dumps(REAL), encoding="utf-8")
    candidate.write_bytes(content)
    code, err = run_cli(
        "promote", "--baseline", str(baseline), "--candidate", str(candidate),
        "--change", "alias_or_semantic_metadata", "--config", str(folder / "qlab.yaml"),
    )  # fmt: skip
    assert_clean(code, err, candidate, verdicts=("cannot be compared",))  # exit 2 is also "not comparable"


@SETTINGS
@given(content=documents(to_json) | deep(json_only=True) | BYTES)
def test_qlab_run_on_any_durations_file(folder: Path, content: bytes) -> None:
    path = folder / "durations.json"
    path.write_bytes(content)
    code, err = run_cli(
        "run", "--config", str(folder / "qlab.yaml"), "--out", str(folder / "out"), "--quiet",
        "--shard", "1/2", "--durations", str(path),
    )  # fmt: skip
    assert_clean(code, err, path)


# ---------------------------------------------------------------------------------------------- finding C
# Found by this campaign (docs/reliability.md, finding C): parseable artifacts with an off-schema field crashed
# report and promote. Readers now check artifacts against schemas/result.schema.json first.


def _mutated(path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(json.dumps(REAL))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_report_on_a_gate_reason_that_is_not_a_string(tmp_path: Path) -> None:
    path = _mutated(tmp_path / "result.json", lambda d: d["gates"][1].update(reasons=[["a list"]]))
    code, err = run_cli("report", str(path), "--markdown", str(tmp_path / "summary.md"))
    assert code == 2 and "result.json: $.gates[1].reasons[0]: expected string, got array" in err, err


def test_promote_on_a_case_suite_that_is_not_a_string(folder: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(REAL), encoding="utf-8")
    candidate = _mutated(tmp_path / "candidate.json", lambda d: d["cases"][3].update(suite={"a": 1}))
    code, err = run_cli(
        "promote", "--baseline", str(baseline), "--candidate", str(candidate),
        "--change", "alias_or_semantic_metadata", "--config", str(folder / "qlab.yaml"),
    )  # fmt: skip
    assert code == 2 and "candidate.json: $.cases[3].suite: expected string, got object" in err, err

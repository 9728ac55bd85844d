"""Selection: --suite, --stage, --case, --tag, --cadence, --last-failed, and unknown names."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.errors import UsageError
from qlab.run.selection import SelectionSpec, is_empty_ok, select
from run import fakes as f


def _ids(tmp_path: Path, spec: SelectionSpec, previous: dict | None = None) -> list[str]:  # type: ignore[type-arg]
    cases = (*f.demo_cases(), f.case("s9", "search_core", "search", tags=("smoke",), line=3))
    return [c.id for c in select(f.config(tmp_path), cases, spec, previous=previous).cases]


def test_filters(tmp_path: Path) -> None:
    assert _ids(tmp_path, SelectionSpec()) == [
        "s1",
        "s9",
        "s2",
        "p1",
        "p2",
        "e1",
    ]  # suite order, then file line
    assert _ids(tmp_path, SelectionSpec(suites=("plan_e2e",))) == ["p1", "p2"]
    assert _ids(tmp_path, SelectionSpec(stages=("execute",))) == ["e1"]
    assert _ids(tmp_path, SelectionSpec(cases=("p*", "e1"))) == ["p1", "p2", "e1"]
    assert _ids(tmp_path, SelectionSpec(tags=("smoke",))) == ["s9"]
    assert _ids(tmp_path, SelectionSpec(cadences=("dev_deployment_smoke",))) == ["e1"]
    assert _ids(tmp_path, SelectionSpec(suites=("search_core",), tags=("smoke",))) == [
        "s9"
    ]  # AND across kinds


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (SelectionSpec(suites=("serch_core",)), "unknown suite 'serch_core'. Did you mean 'search_core'?"),
        (SelectionSpec(stages=("plam",)), "unknown stage 'plam'. Did you mean 'plan'?"),
        (SelectionSpec(cadences=("manul",)), "unknown cadence 'manul'. Did you mean 'manual'?"),
        (SelectionSpec(cases=("p3",)), "unknown case id 'p3'."),
    ],
)
def test_unknown_names_are_usage_errors(tmp_path: Path, spec: SelectionSpec, message: str) -> None:
    with pytest.raises(UsageError) as exc:
        _ids(tmp_path, spec)
    assert str(exc.value).startswith(message)


def test_last_failed(tmp_path: Path) -> None:
    previous = {
        "cases": [
            {"case_id": "p2", "status": "failed"},
            {"case_id": "e1", "status": "blocked"},
            {"case_id": "s1", "status": "passed"},
        ]
    }
    assert _ids(tmp_path, SelectionSpec(last_failed=True), previous) == ["p2", "e1"]
    everything = _ids(tmp_path, SelectionSpec())
    assert _ids(tmp_path, SelectionSpec(last_failed=True), None) == everything
    assert _ids(tmp_path, SelectionSpec(last_failed=True), {"cases": []}) == everything


def test_gates_and_warnings(tmp_path: Path) -> None:
    from qlab.project.model import Suite

    config = f.config(tmp_path)
    suites = {**config.suites, "orphan": Suite("orphan", "search", ("o/*.yaml",))}
    import dataclasses

    chosen = select(
        dataclasses.replace(config, suites=suites), f.demo_cases(), SelectionSpec(stages=("search",))
    )
    assert [g.name for g in chosen.gates] == ["build", "search"]
    assert chosen.warnings == ("suite 'orphan' is in no gate: its cases are not run",)
    assert is_empty_ok(SelectionSpec(stages=("build",))) and not is_empty_ok(SelectionSpec())

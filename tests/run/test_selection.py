"""Selection: --suite, --stage, --case, --tag, --cadence, --last-failed, and unknown names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from qlab.contracts.errors import InputError, UsageError
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


def _manual(tmp_path: Path, **gate: object) -> tuple[object, tuple[object, ...]]:
    """The fake config with a manual-cadence mutation suite in the execute gate."""
    import dataclasses

    from qlab.project.model import Gate, Suite

    base = f.config(tmp_path)
    suites = {
        **base.suites,
        "execute_mutation": Suite(
            "execute_mutation",
            "execute",
            ("m/*.yaml",),
            environment="dev",
            cadence="manual",
            category="policy",
        ),
    }
    gates = tuple(
        dataclasses.replace(g, suites=(*g.suites, "execute_mutation"), **gate) if g.stage == "execute" else g
        for g in base.gates
    )
    config = dataclasses.replace(base, suites=suites, gates=gates)
    cases = (
        *f.demo_cases(),
        f.case("m1", "execute_mutation", "execute"),
        f.case("m2", "execute_mutation", "execute"),
    )
    assert all(isinstance(g, Gate) for g in gates)
    return config, cases


def test_a_manual_suite_runs_only_when_asked_for(tmp_path: Path) -> None:
    config, cases = _manual(tmp_path)
    plain = select(config, cases, SelectionSpec())  # type: ignore[arg-type]
    assert "m1" not in [c.id for c in plain.cases] and "e1" in [c.id for c in plain.cases]
    assert plain.skipped == (
        {
            "suite": "execute_mutation",
            "reason": "cadence: manual — it runs only when asked for: --cadence manual, --suite execute_mutation, "
            "or include_manual: true on a gate that names it",
            "cases": 2,
        },
    )
    for asked in (
        SelectionSpec(cadences=("manual",)),
        SelectionSpec(suites=("execute_mutation",)),
        SelectionSpec(cases=("m1",)),
    ):
        chosen = select(config, cases, asked)  # type: ignore[arg-type]
        assert "m1" in [c.id for c in chosen.cases] and chosen.skipped == (), asked
    # a pattern does not ask for it; a selection that leaves it out anyway does not report it as skipped
    assert select(config, cases, SelectionSpec(cases=("m*",))).skipped  # type: ignore[arg-type]
    assert select(config, cases, SelectionSpec(suites=("plan_e2e",))).skipped == ()  # type: ignore[arg-type]


def test_a_gate_opts_in_to_its_manual_suites(tmp_path: Path) -> None:
    config, cases = _manual(tmp_path, include_manual=True)
    chosen = select(config, cases, SelectionSpec())  # type: ignore[arg-type]
    assert {"m1", "m2"} <= {c.id for c in chosen.cases} and chosen.skipped == ()


def _with_regression(tmp_path: Path) -> tuple[object, list[object]]:
    config = f.config(tmp_path)
    suites = {
        **config.suites,
        "regression": dataclasses.replace(
            config.suites["plan_e2e"],
            name="regression",
            category="regression",
            cadence="every_release_candidate",
        ),
        "policy": dataclasses.replace(
            config.suites["plan_e2e"], name="policy", must_pass=True, cadence="manual"
        ),
    }
    gates = tuple(
        dataclasses.replace(g, suites=(*g.suites, "regression", "policy")) if g.name == "plan" else g
        for g in config.gates
    )
    cases = [
        *f.demo_cases(),
        f.case("r1", "regression", "plan", line=1),
        f.case("m1", "policy", "plan", line=1),
    ]
    return dataclasses.replace(config, suites=suites, gates=gates), cases


@pytest.mark.parametrize(
    "spec",
    [
        SelectionSpec(suites=("search_core",), keep_must_pass=True),
        SelectionSpec(stages=("search", "select"), keep_must_pass=True),
        SelectionSpec(cases=("p*",), keep_must_pass=True),
        SelectionSpec(tags=("smoke",), keep_must_pass=True),
    ],
)
def test_a_selection_that_leaves_out_a_must_pass_suite_is_an_error_when_asked(
    tmp_path: Path, spec: SelectionSpec
) -> None:
    """Rule (issue 36, 4): with ``--keep-must-pass`` (the Action always passes it), a --suite/--stage/--case/--tag
    selection that leaves out a regression suite the run would judge is an ERROR (exit 2), never a quiet PASS."""
    config, cases = _with_regression(tmp_path)
    with pytest.raises(InputError) as exc:
        select(config, cases, spec)  # type: ignore[arg-type]
    assert exc.value.exit_code == 2
    assert "leaves out the must-pass suite(s) regression (category regression)" in str(exc.value)
    assert "policy" not in str(exc.value)  # a manual suite is not part of a run unless asked for


@pytest.mark.parametrize(
    "spec",
    [
        SelectionSpec(keep_must_pass=True),  # everything
        SelectionSpec(suites=("search_core", "regression"), keep_must_pass=True),
        SelectionSpec(
            cadences=("every_search_change",), keep_must_pass=True
        ),  # qlab.yaml says what runs then
        SelectionSpec(suites=("search_core",)),  # without the flag: a local run of one suite
    ],
)
def test_a_selection_that_keeps_the_must_pass_suites_runs(tmp_path: Path, spec: SelectionSpec) -> None:
    config, cases = _with_regression(tmp_path)
    assert select(config, cases, spec).cases  # type: ignore[arg-type]

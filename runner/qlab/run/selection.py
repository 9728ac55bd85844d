"""Which cases and gates a run covers: ``--suite``, ``--stage``, ``--case``, ``--tag``, ``--cadence``,
``--last-failed``.

Filters of different kinds combine with AND, values of one kind with OR. A name that does not exist (suite,
stage, cadence, a literal case id) is a usage error with a "Did you mean …?" hint, so a typo never turns into a
silently empty, green run.

A case with ``status: archived`` never runs: ``Selected.archived`` lists the ones the filters matched (the
artifact's ``archived_cases``). A ``status: draft`` case runs like any other (it never gates: ``qlab.run.gates``).

A ``cadence: manual`` suite runs only when asked for: ``--cadence manual``, ``--suite NAME``, ``--case`` with the
literal id of one of its cases, or a gate with ``include_manual: true`` that names it in ``suites``. Otherwise it is
left out, and ``Selected.skipped`` says so (the artifact's ``skipped_suites``, the console).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts.errors import InputError, UsageError
from qlab.project.model import CADENCES, STAGE_MODES, STAGES, Case, Config, Gate

CASELESS_STAGES = frozenset({"build", "learn"})
FAILED_STATUSES = frozenset({"failed", "error", "blocked"})


@dataclass(frozen=True, slots=True)
class SelectionSpec:
    """The selection options of ``qlab run``; empty means "no filter"."""

    suites: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()  # ids or fnmatch patterns
    tags: tuple[str, ...] = ()
    cadences: tuple[str, ...] = ()
    last_failed: bool = False
    # refuse a --suite/--stage/--case/--tag selection that leaves out a must-pass suite (``must_pass_left_out``)
    keep_must_pass: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "suites": list(self.suites),
            "stages": list(self.stages),
            "cases": list(self.cases),
            "tags": list(self.tags),
            "cadences": list(self.cadences),
            "last_failed": self.last_failed,
        }

    def options(self) -> str:
        """The filters as the command line spells them: ``--suite a --tag smoke``."""
        words = [
            f"--{flag} {value}"
            for flag, values in (
                ("suite", self.suites),
                ("stage", self.stages),
                ("case", self.cases),
                ("tag", self.tags),
                ("cadence", self.cadences),
            )
            for value in values
        ]
        return " ".join([*words, *(["--last-failed"] if self.last_failed else [])]) or "none"


@dataclass(frozen=True, slots=True)
class Selected:
    cases: tuple[Case, ...]  # in configuration order: suites as written, then file and line
    gates: tuple[
        Gate, ...
    ]  # the gates that run, in order (the build gate always runs: it makes the collection)
    gate_suites: Mapping[str, tuple[str, ...]]  # gate name -> its effective suites (every configured gate)
    warnings: tuple[str, ...] = ()
    # suites the selection matched but the run leaves out: ``{suite, reason, cases}`` (manual cadence)
    skipped: tuple[Mapping[str, Any], ...] = ()
    archived: tuple[Case, ...] = ()  # ``status: archived`` cases the filters matched: not run, listed


def gate_suites(config: Config, gate: Gate) -> tuple[str, ...]:
    """The suites a gate covers: the ones it names, else every suite whose mode its stage handles."""
    if gate.suites:
        return gate.suites
    modes = STAGE_MODES.get(gate.stage, ())
    return tuple(name for name, suite in config.suites.items() if suite.mode in modes)


MANUAL = "manual"


def asked_for(config: Config, suite: str, spec: SelectionSpec, cases: Sequence[Case]) -> bool:
    """Whether a ``cadence: manual`` suite was asked for (see the module docstring)."""
    if suite in spec.suites or MANUAL in spec.cadences:
        return True
    if any(g.include_manual and suite in g.suites for g in config.gates):
        return True
    literal = {p for p in spec.cases if not any(ch in p for ch in "*?[")}
    return any(c.suite == suite and c.id in literal for c in cases)


def failed_ids(previous: Mapping[str, Any]) -> set[str]:
    """Case ids that did not pass in an earlier result artifact (failed, error or blocked)."""
    return {str(c["case_id"]) for c in previous.get("cases", ()) if c.get("status") in FAILED_STATUSES}


def _check_names(kind: str, given: Iterable[str], known: Sequence[str]) -> None:
    for name in given:
        if name not in known:
            raise UsageError(f"unknown {kind} {name!r}.{did_you_mean(name, known)} Known: {', '.join(known)}")


def _check_case_patterns(patterns: Iterable[str], ids: Sequence[str]) -> None:
    known = set(ids)
    for pattern in patterns:
        if any(ch in pattern for ch in "*?[") or pattern in known:
            continue
        raise UsageError(f"unknown case id {pattern!r}.{did_you_mean(pattern, ids)}")


def select(
    config: Config,
    cases: Sequence[Case],
    spec: SelectionSpec,
    *,
    previous: Mapping[str, Any] | None = None,
) -> Selected:
    """Apply ``spec`` to the project's cases and gates. Raises UsageError for unknown names."""
    _check_names("suite", spec.suites, list(config.suites))
    _check_names("stage", spec.stages, list(STAGES))
    _check_names("cadence", spec.cadences, list(CADENCES))
    _check_case_patterns(spec.cases, [c.id for c in cases])
    warnings: list[str] = []
    mapping = {g.name: gate_suites(config, g) for g in config.gates}
    gated = {s for names in mapping.values() for s in names}
    for name in config.suites:
        if name not in gated:
            warnings.append(f"suite {name!r} is in no gate: its cases are not run")
    wanted_stages = set(spec.stages)
    stage_suites = {s for g in config.gates if g.stage in wanted_stages for s in mapping[g.name]}
    keep = set(failed_ids(previous)) if spec.last_failed and previous is not None else None
    if spec.last_failed and previous is None:
        warnings.append("--last-failed: no earlier result artifact; running the whole selection")
    elif keep is not None and not keep:
        warnings.append("--last-failed: the earlier run had no failures; running the whole selection")
        keep = None
    manual = {
        name
        for name, suite in config.suites.items()
        if suite.cadence == MANUAL and not asked_for(config, name, spec, cases)
    }
    left_out: dict[str, int] = {}
    chosen: list[Case] = []
    archived: list[Case] = []
    for case in cases:
        suite = config.suites.get(case.suite)
        if suite is None or case.suite not in gated:
            continue
        if spec.suites and case.suite not in spec.suites:
            continue
        if wanted_stages and case.suite not in stage_suites:
            continue
        if spec.cadences and suite.cadence not in spec.cadences:
            continue
        if spec.tags and not set(spec.tags) & set(case.tags):
            continue
        if spec.cases and not any(fnmatch.fnmatchcase(case.id, p) for p in spec.cases):
            continue
        if keep is not None and case.id not in keep:
            continue
        if case.status == "archived":
            archived.append(case)
            continue
        if case.suite in manual:
            left_out[case.suite] = left_out.get(case.suite, 0) + 1
            continue
        chosen.append(case)
    if spec.keep_must_pass:
        dropped = must_pass_left_out(config, cases, spec, chosen=chosen, previous=previous)
        if dropped:
            raise InputError(
                f"{spec.options()} leaves out the must-pass suite(s) {', '.join(dropped)}: a gated run must judge "
                "every suite of category regression or marked must_pass: true. Add them to the selection "
                "(the action's suites: or stages: input), select by cadence (qlab.yaml says which suites run "
                "when), or run qlab without --keep-must-pass"
            )
    order = {name: i for i, name in enumerate(config.suites)}
    chosen.sort(key=lambda c: (order[c.suite], c.file, c.origin.line, c.id))
    suites_with_cases = {c.suite for c in chosen}
    gates = []
    for gate in config.gates:
        if gate.stage == "build":
            gates.append(gate)
        elif gate.stage in CASELESS_STAGES:
            if not wanted_stages or gate.stage in wanted_stages:
                gates.append(gate)
        elif set(mapping[gate.name]) & suites_with_cases:
            gates.append(gate)
    skipped = tuple(
        {
            "suite": name,
            "reason": f"cadence: manual — it runs only when asked for: --cadence manual, --suite {name}, or "
            "include_manual: true on a gate that names it",
            "cases": count,
        }
        for name, count in left_out.items()
    )
    return Selected(
        cases=tuple(chosen),
        gates=tuple(gates),
        gate_suites=mapping,
        warnings=tuple(warnings),
        skipped=skipped,
        archived=tuple(archived),
    )


def must_pass_left_out(
    config: Config,
    cases: Sequence[Case],
    spec: SelectionSpec,
    *,
    chosen: Sequence[Case],
    previous: Mapping[str, Any] | None = None,
) -> list[str]:
    """The required must-pass suites (category regression, or ``must_pass: true``) that the run would judge with
    only its ``--cadence`` and ``--last-failed`` filters (what qlab.yaml and the last run decide) but that the
    ``--suite``, ``--stage``, ``--case`` or ``--tag`` filters leave out, each named with why it must pass."""
    narrowing = spec.suites or spec.stages or spec.cases or spec.tags
    if not narrowing:
        return []
    kept = {c.suite for c in chosen}
    whole = select(
        config, cases, SelectionSpec(cadences=spec.cadences, last_failed=spec.last_failed), previous=previous
    )
    would = {c.suite for c in whole.cases}
    out = []
    for name, suite in config.suites.items():
        why = (
            "category regression"
            if suite.category == "regression"
            else "must_pass: true"
            if suite.must_pass
            else ""
        )
        if why and suite.required and name in would and name not in kept:
            out.append(f"{name} ({why})")
    return out


def is_empty_ok(spec: SelectionSpec) -> bool:
    """Zero selected cases is an input error (exit 2), unless only case-less stages were asked for."""
    return bool(spec.stages) and set(spec.stages) <= CASELESS_STAGES

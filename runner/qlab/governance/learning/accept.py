"""``qlab accept-case``: move an approved EvalCase proposal into the regression suite.

The regression suite is ``learning.regression_suite`` in qlab.yaml; it must be ``required`` (the regression rule: "add it
to the Regression Suite (required: true) — all future publishes must pass it"). The proposal's case is written
as a new case file in the suite's folder (the literal part of its first glob), named after the case id, with a
comment saying who accepted it, when, and from which proposal. The project is then loaded again: if the new
file is not a valid case of that suite, it is removed and the problems are reported. The proposal file is kept,
now ``accepted`` with the reviewer, the time and the case file (its audit trail).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.errors import ConfigError, InputError, UsageError
from qlab.governance.records import now_iso, write_json, write_text
from qlab.project import load_project, messages, resolve, schemas
from qlab.project.files import display_path, has_magic, read_document
from qlab.project.model import Suite
from qlab.project.yaml_emit import dump

# a proposal of this mode may join a suite of that mode (a search case in a plan suite must then also plan)
_JOINS = {("search", "search"), ("plan", "plan"), ("execute", "execute"), ("search", "plan")}


@dataclass(frozen=True, slots=True)
class AcceptedCase:
    case_id: str
    suite: str
    file: Path
    proposal: dict[str, Any]
    note: str = ""


def load_proposal(path: Path) -> dict[str, Any]:
    """Read and validate a proposal (``schemas/proposal.schema.json``); located errors as ConfigError."""
    _, document = read_document(path, display=display_path(path))
    issues = schemas.validate(document.data, "proposal")
    if issues:
        raise ConfigError(messages.diagnostics(issues, document))
    data: dict[str, Any] = document.data
    return data


def accept_case(proposal_path: Path, *, config_path: Path, by: str, now: str | None = None) -> AcceptedCase:
    """Accept the proposal at ``proposal_path`` into the regression suite of the project at ``config_path``."""
    reviewer = " ".join(by.split())
    if not reviewer:
        raise UsageError("--by needs the reviewer's name")
    proposal = load_proposal(proposal_path)
    if proposal["status"] != "pending_review":
        raise UsageError(f"{display_path(proposal_path)}: proposal is already {proposal['status']}")
    project = load_project(config_path)
    config = project.config
    suite = _regression_suite(config.learning.regression_suite, config.suites, config.path)
    if not any(suite.name in gate.suites for gate in config.gates):
        raise InputError(
            f"{config.path}: $.gates: regression suite {suite.name!r} is in no gate, so no run would run it; "
            f"add it to the suites of the {suite.mode} gate"
        )
    case = dict(proposal["case"])
    mode = str(case.get("mode", proposal["input"].get("mode", suite.mode)))
    if (mode, suite.mode) not in _JOINS:
        raise InputError(
            f"the proposal is a {mode} case; regression suite {suite.name!r} is a {suite.mode} suite: "
            f"set learning.regression_suite to a {mode} suite"
        )
    note = (
        ""
        if mode == suite.mode
        else f"the {mode} case joins {suite.mode} suite {suite.name!r}: it must now also {suite.mode}"
    )
    case.pop("mode", None)  # the suite's mode applies
    if proposal["source"].get("suite") == suite.name:
        raise InputError(
            f"case {proposal['source']['case_id']!r} is already in regression suite {suite.name!r}"
        )
    for existing in project.cases_for(suite.name):
        if existing.query == case.get("query") and existing.expected_target == case.get("expected_target"):
            raise InputError(
                f"regression case {existing.id!r} ({existing.file}) already covers this query and target"
            )
    ids = {c.id for c in project.cases}
    base_id, n = str(case["id"]), 2
    while case["id"] in ids:
        case["id"], n = f"{base_id}-{n}", n + 1
    stamp = now or now_iso()
    target = _case_file(config.path, suite, str(case["id"]))
    if target.exists():
        raise InputError(
            f"{display_path(target)} already exists; move it away or rename the proposal's case id"
        )
    write_text(target, _case_text(target, config.path, case, f"accepted by {reviewer} at {stamp} from proposal "
                                  f"{proposal['id']} ({proposal['description']})"))  # fmt: skip
    _check_joined(config_path, suite.name, str(case["id"]), target)
    proposal.update(
        status="accepted", accepted_by=reviewer, accepted_at=stamp, case_id=case["id"], case_file=str(target)
    )
    write_json(proposal_path, proposal)
    return AcceptedCase(str(case["id"]), suite.name, target, proposal, note)


def _regression_suite(name: str | None, suites: Any, config_path: str) -> Suite:
    if not name:
        raise InputError(
            f"{config_path}: $.learning.regression_suite: not set; name the required regression suite"
        )
    suite: Suite | None = suites.get(name)
    if suite is None:
        raise InputError(f"{config_path}: $.learning.regression_suite: {name!r} is not a suite")
    if not suite.required:
        raise InputError(
            f"{config_path}: $.suites.{name}.required: the regression suite must be required "
            "(every run must pass its cases); set required: true"
        )
    return suite


def _case_file(config_path: str, suite: Suite, case_id: str) -> Path:
    """``<literal folder of the suite's first glob>/<case id>.yaml`` (or ``.json`` for a JSON-only suite)."""
    pattern = suite.cases[0]
    literal: list[str] = []
    for part in Path(pattern).parts[:-1]:
        if has_magic(part):
            break
        literal.append(part)
    suffix = ".json" if pattern.endswith(".json") else ".yaml"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)
    return resolve(config_path, Path(*literal, f"{safe}{suffix}"))


def _case_text(target: Path, config_path: str, case: dict[str, Any], provenance: str) -> str:
    """The case file: YAML with the schema modeline and a comment saying who accepted it (JSON has no comments:
    there the proposal file alone keeps that record)."""
    if target.suffix == ".json":
        return json.dumps(case, indent=2, ensure_ascii=False) + "\n"
    schema = Path(config_path).parent / "schemas" / "case.schema.json"
    modeline = ""
    if schema.is_file():
        modeline = (
            f"# yaml-language-server: $schema={Path(os.path.relpath(schema, target.parent)).as_posix()}\n"
        )
    return modeline + "# " + " ".join(provenance.split()) + "\n" + dump(case)


def _check_joined(config_path: Path, suite: str, case_id: str, target: Path) -> None:
    """Load the project again; undo the write unless the new case is a valid case of ``suite``."""
    try:
        project = load_project(config_path)
    except ConfigError as exc:
        target.unlink(missing_ok=True)
        raise InputError(
            f"the accepted case would make the project invalid; nothing was written:\n{exc}"
        ) from None
    if case_id not in {c.id for c in project.cases_for(suite)}:
        target.unlink(missing_ok=True)
        raise InputError(
            f"{display_path(target)} is not matched by the globs of suite {suite!r}; nothing was written: "
            "add a glob for the suite's folder"
        )

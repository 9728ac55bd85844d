"""``qlab accept-case``: move an approved EvalCase proposal into the regression suite, and a case through its
lifecycle (draft → active → archived).

The regression suite is ``learning.regression_suite`` in qlab.yaml and must be ``required``. The proposal's case
becomes a new case file in the suite's folder (the literal part of its first glob), named after the case id, with
its ``name``, ``status``, ``created_at``, ``trace`` and a comment saying who accepted it, when and from which
proposal. The project is then loaded again: a file that is not a valid case of the suite is removed and the
problems reported. The proposal file is kept, marked ``accepted`` (its audit trail). ``reject_proposal`` records a
rejection instead.

``set_status`` edits an existing case's status in place (``qlab.project.case_edit``); the edit is undone when the
project no longer loads."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts.errors import ConfigError, InputError, UsageError
from qlab.governance.records import inside, now_iso, write_json, write_text
from qlab.project import load_project, messages, resolve, schemas
from qlab.project.case_edit import set_case_field
from qlab.project.document import format_path
from qlab.project.files import display_path, has_magic, read_document
from qlab.project.model import LIFECYCLES, Case, Suite
from qlab.project.yamlio import dump_yaml

# a check of a case before it becomes active (the sandbox's quality gate): None when it may, else why not
ActivationCheck = Callable[[Case], "str | None"]

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


def proposal_problems(data: Any) -> list[str]:
    """What makes ``data`` no proposal (``schemas/proposal.schema.json``), each as ``$.path: message``; for a
    proposal held in another record (a learning suggestion), which has no file and so no line numbers."""
    return [
        f"$.proposal{format_path(path)[1:]}: {message}"
        for path, message, _ in messages.explain_all(schemas.validate(data, "proposal"))
    ]


def accept_case(
    proposal_path: Path,
    *,
    config_path: Path,
    by: str,
    now: str | None = None,
    status: str = "active",
    check: ActivationCheck | None = None,
) -> AcceptedCase:
    """Accept the proposal at ``proposal_path`` into the regression suite of the project at ``config_path``.

    ``status``: ``active`` (it gates from the next run on) or ``draft`` (it runs and is reported, never gates).
    ``check`` is asked before the case is written as active (the sandbox's quality gate); its refusal is an
    InputError that says to accept it as a draft instead."""
    reviewer = " ".join(by.split())
    if not reviewer:
        raise UsageError("--by needs the reviewer's name")
    if status not in ("active", "draft"):
        raise UsageError(f"a proposal is accepted as active or draft, not {status!r}")
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
    case = _lifecycle_fields(case, proposal, status=status, stamp=stamp)
    if status == "active" and check is not None:
        refused = check(_as_case(case, suite))
        if refused:
            raise InputError(
                f"case {case['id']} cannot gate yet: {refused}; accept it as a draft (--status draft) and make it "
                "active once it passes (qlab accept-case --case ID --status active)"
            )
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


def _lifecycle_fields(
    case: dict[str, Any], proposal: dict[str, Any], *, status: str, stamp: str
) -> dict[str, Any]:
    """The case with its name, lifecycle status, creation date and trace, right after its id."""
    source = proposal.get("source") or {}
    trace = {
        "proposal": proposal.get("id"),
        "run_id": source.get("run_id"),
        "case_id": source.get("case_id"),
        "result_digest": source.get("result_digest"),
        "corrected_run_id": (proposal.get("corrected") or {}).get("run_id"),
    }
    head = {
        "id": case["id"],
        "name": case.get("name") or f"regression: {case.get('query', case['id'])}",
        "status": status,
        "created_at": stamp,
        "trace": {k: str(v) for k, v in trace.items() if v},
    }
    return {**head, **{k: v for k, v in case.items() if k not in head}}


def _as_case(data: dict[str, Any], suite: Suite) -> Case:
    """A Case of the proposed data, for the activation check (it has no file yet)."""
    from qlab.project.build_case import build_case  # the project layer's own builder
    from qlab.project.model import NO_ORIGIN

    origins = [NO_ORIGIN] * len(data.get("assertions") or ())
    return build_case(data, suite=suite, file="", origin=NO_ORIGIN, assertion_origins=origins)


def reject_proposal(
    proposal_path: Path, *, by: str, reason: str = "", now: str | None = None
) -> dict[str, Any]:
    """Record a reviewer's rejection of a pending proposal (nothing joins the regression suite); the scorecard's
    human_acceptance counts it and the learning loop never proposes it again."""
    reviewer = " ".join(by.split())
    if not reviewer:
        raise UsageError("--by needs the reviewer's name")
    proposal = load_proposal(proposal_path)
    if proposal["status"] != "pending_review":
        raise UsageError(f"{display_path(proposal_path)}: proposal is already {proposal['status']}")
    proposal.update(status="rejected", rejected_by=reviewer, rejected_at=now or now_iso())
    if reason:
        proposal["reject_reason"] = reason
    write_json(proposal_path, proposal)
    return proposal


@dataclass(frozen=True, slots=True)
class StatusChange:
    case_id: str
    file: Path
    before: str
    after: str


def set_status(
    config_path: Path,
    case_id: str,
    status: str,
    *,
    by: str,
    now: str | None = None,
    check: ActivationCheck | None = None,
) -> StatusChange:
    """Move case ``case_id`` to lifecycle ``status`` (draft, active, archived) in its file, with a comment naming
    who and when; see the module doc. ``check`` is asked before a case becomes active (the sandbox's quality
    gate)."""
    reviewer = " ".join(by.split())
    if not reviewer:
        raise UsageError("--by needs the reviewer's name")
    if status not in LIFECYCLES:
        raise UsageError(
            f"unknown status {status!r}.{did_you_mean(status, LIFECYCLES)} Known: {', '.join(LIFECYCLES)}"
        )
    project = load_project(config_path)
    case = next((c for c in project.cases if c.id == case_id), None)
    if case is None:
        ids = [c.id for c in project.cases]
        raise UsageError(f"no case {case_id!r} in the project.{did_you_mean(case_id, ids)}")
    if case.status == status:
        raise UsageError(f"case {case_id} is already {status}")
    if status == "active" and check is not None:
        refused = check(case)
        if refused:
            raise InputError(f"case {case_id} cannot become active: {refused}")
    path = resolve(project.config, case.file)
    before = path.read_text(encoding="utf-8")
    stamp = now or now_iso()
    text = set_case_field(path, case, "status", status, comment=f"{status} since {stamp} (by {reviewer})")
    write_text(path, text)
    try:
        again = load_project(config_path)
    except ConfigError as exc:
        write_text(path, before)
        raise InputError(
            f"setting status {status} would make {display_path(path)} invalid; nothing changed:\n{exc}"
        ) from None
    moved = next((c for c in again.cases if c.id == case_id), None)
    if moved is None or moved.status != status:
        write_text(path, before)
        raise InputError(
            f"{display_path(path)}: the status of {case_id} could not be set; edit the file by hand"
        )
    return StatusChange(case_id, path, case.status, status)


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
    folder = resolve(config_path, Path(*literal))
    return inside(folder, f"{safe}{suffix}", what=f"the proposal's case id {case_id!r}")


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
    return modeline + "# " + " ".join(provenance.split()) + "\n" + dump_yaml(case, file=str(target))


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

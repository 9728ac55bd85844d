"""A skill's release (the skill release quality gates): five gates in order, then draft or published.

trigger eval → functional eval → policy eval → regression eval → human review (see ``release_stages``). The
gates run in order and the first failure stops the release: the skill stays ``draft``, the failed gate and its
reasons are recorded, later gates are ``skipped``. Only when all five pass is the skill ``published``. A failing
gate blocks with no exception and no override flag.

Files (paths from qlab.yaml, relative to it):

- ``release.<skill>.record_file`` (default ``.qlab/releases.json``): each skill's status and the history of its
  release attempts (schema ``schemas/release-record.schema.json``);
- ``release.<skill>.approvals_file`` (default ``.qlab/approvals.json``): human reviews, each bound to the
  sha256 of the result artifact reviewed (``qlab approve``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection.model import Collection
from qlab.contracts.errors import EXIT_BLOCKED, EXIT_PASS, InputError, UsageError
from qlab.engine.base import Engine
from qlab.governance.records import Artifact, now_iso, read_json, resolve, write_json
from qlab.governance.release import policy as release_policy
from qlab.governance.release import stages as release_stages
from qlab.governance.release.stages import GATES, GateResult
from qlab.project.files import display_path, read_document
from qlab.project.model import Case, Config, ReleaseSkill

VERSION = 1


@dataclass(frozen=True, slots=True)
class ReleaseOutcome:
    """One release attempt: ``status`` published | draft, the gates in order, the failed gate (if any)."""

    skill: str
    status: str
    gates: tuple[GateResult, ...]
    at: str
    result: Mapping[str, Any] | None

    @property
    def failed_gate(self) -> str | None:
        return next((g.name for g in self.gates if g.status == "failed"), None)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.status == "published" else EXIT_BLOCKED

    def to_dict(self) -> dict[str, Any]:
        failed = next((g for g in self.gates if g.status == "failed"), None)
        return {
            "skill": self.skill,
            "status": self.status,
            "at": self.at,
            "failed_gate": failed.name if failed else None,
            "reasons": list(failed.reasons) if failed else [],
            "result": dict(self.result) if self.result else None,
            "gates": [g.to_dict() for g in self.gates],
        }


def skill_named(config: Config, name: str) -> ReleaseSkill:
    skill = config.release.get(name)
    if skill is None:
        known = sorted(config.release)
        raise UsageError(
            f"no skill {name!r} under release: in {config.path}.{did_you_mean(name, known)}"
            + (f" Known: {', '.join(known)}" if known else " The config declares no skill.")
        )
    return skill


def evaluate(
    skill: ReleaseSkill,
    *,
    config: Config,
    collection: Collection,
    engine: Engine,
    artifact: Artifact | None,
    suite_cases: Sequence[Case],
    approvals: Sequence[Mapping[str, Any]],
    now: str | None = None,
) -> ReleaseOutcome:
    """Run the five gates in order; the first failure keeps the skill draft and skips the rest.

    ``suite_cases`` are the project's cases of the regression suite; ``approvals`` the approvals file's items.
    """
    gates: list[GateResult] = []

    def blocked() -> bool:
        return any(g.status == "failed" for g in gates)

    gates.append(
        release_stages.trigger_eval(
            skill, _trigger_cases(config, skill), collection=collection, engine=engine
        )
    )
    golden: list[dict[str, Any]] = []
    if not blocked():
        functional, golden = release_stages.functional_eval(
            skill, _golden_cases(config, skill), engine=engine
        )
        gates.append(functional)
    if not blocked():
        gates.append(release_policy.policy_eval(skill, golden, collection=collection, artifact=artifact))
    if not blocked():
        gates.append(
            release_policy.regression_eval(
                skill, config=config, suite_cases=suite_cases, collection=collection, artifact=artifact
            )
        )
    if not blocked():
        gates.append(release_policy.human_review(skill, approvals, artifact=artifact))
    failed = next((g.name for g in gates if g.status == "failed"), None)
    for name in GATES[len(gates) :]:
        gates.append(GateResult(name, "skipped", (f"not run: {failed} failed",)))
    result = (
        None
        if artifact is None
        else {"path": artifact.path, "digest": artifact.digest, "run_id": artifact.run_id}
    )
    status = "draft" if failed else "published"
    return ReleaseOutcome(skill.name, status, tuple(gates), now or now_iso(), result)


def _release_file(config: Config, skill: ReleaseSkill, key: str, definition: str) -> list[dict[str, Any]]:
    location = getattr(skill, key)
    if not location:
        raise InputError(
            f"{config.path}: $.release.{skill.name}.{key}: not set; the {definition.replace('_', ' ')} file is required"
        )
    path = resolve(config.path, location)
    if not path.is_file():
        raise InputError(f"{config.path}: $.release.{skill.name}.{key}: {display_path(path)} does not exist")
    # validated with the project (qlab validate / load_project); read again here with positions for errors
    _, document = read_document(path, display=display_path(path))
    data = document.data
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise InputError(
            f"{display_path(path)}: $: expected a list of cases; run `qlab validate` for details"
        )
    return data


def _trigger_cases(config: Config, skill: ReleaseSkill) -> list[dict[str, Any]]:
    return _release_file(config, skill, "trigger_cases", "trigger_cases")


def _golden_cases(config: Config, skill: ReleaseSkill) -> list[dict[str, Any]]:
    return _release_file(config, skill, "golden_cases", "golden_cases")


# ------------------------------------------------------------------------------------------- record file


def record(config: Config, outcome: ReleaseOutcome) -> Path:
    """Append the attempt to the skill's history and set its status; returns the record file's path."""
    skill = skill_named(config, outcome.skill)
    path = resolve(config.path, skill.record_file)
    data = load_record(path)
    entry = data["skills"].setdefault(outcome.skill, {"status": "draft", "published": None, "history": []})
    entry["status"] = outcome.status
    entry["updated_at"] = outcome.at
    if outcome.status == "published":
        entry["published"] = {"at": outcome.at, **(outcome.result or {})}
    entry["history"].append(outcome.to_dict())
    write_json(path, data)
    return path


def load_record(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"version": VERSION, "skills": {}}
    data = read_json(path, what="release record")
    if not isinstance(data, dict) or not isinstance(data.get("skills"), dict):
        raise InputError(f"{path}: $.skills: expected an object of skills; is this a qlab release record?")
    return data


# ------------------------------------------------------------------------------------------- approvals


def load_approvals(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    data = read_json(path, what="approvals file")
    items = data.get("approvals") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(a, dict) for a in items):
        raise InputError(f"{path}: $.approvals: expected a list of approvals")
    return items


def approvals_path(config: Config, skill: ReleaseSkill) -> Path:
    return resolve(config.path, skill.approvals_file)


def approve(
    config: Config,
    skill_name: str,
    artifact: Artifact,
    *,
    by: str,
    decision: str = "approved",
    note: str = "",
    now: str | None = None,
) -> dict[str, Any]:
    """Record a human review of ``artifact`` (bound to its sha256) for the skill; returns the record."""
    skill = skill_named(config, skill_name)
    reviewer = " ".join(by.split())
    if not reviewer:
        raise UsageError("--by needs the reviewer's name")
    if decision not in ("approved", "rejected", "regenerate"):
        raise UsageError(f"decision must be approved, rejected or regenerate, not {decision!r}")
    path = approvals_path(config, skill)
    items = load_approvals(path)
    entry = {
        "skill": skill.name,
        "reviewer": reviewer,
        "decision": decision,
        "at": now or now_iso(),
        "result_digest": artifact.digest,
        "result_path": artifact.path,
        "run_id": artifact.run_id,
        "note": note,
    }
    items.append(entry)
    write_json(path, {"version": VERSION, "approvals": items})
    return entry

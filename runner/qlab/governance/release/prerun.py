"""A release's pre-run checks: before the five gates run, the skill's bindings and its policy must be there.

``checks`` returns, in order: ``skill_bindings`` (permissions and the golden cases' tools name tools of the
collection, ``qlab.collection.skill_bindings``), ``policy_exists`` (the skill declares permissions and its
regression suite exists, is required and gated), ``policy_published`` (the result was judged under qlab.yaml as
it is now: its ``config_digest``; a changed environment variable is named) and ``result_passed`` (the result's
decision is PASS).

A failed check is ``ERROR`` (exit 2, reason ``skill_binding_unknown``, ``policy_unpublished`` or
``run_not_passed``): nothing was judged, the skill keeps its status and no attempt is recorded. docs/governance.md
(Release) describes each check for users."""

from __future__ import annotations

from dataclasses import dataclass

from qlab.collection import skill_bindings
from qlab.collection.model import Collection
from qlab.governance.records import Artifact
from qlab.project.model import Config, ReleaseSkill


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    message: str
    reason: str = ""


def checks(
    skill: ReleaseSkill, *, config: Config, collection: Collection, artifact: Artifact | None
) -> list[Check]:
    """The release's pre-run checks, in order (see the module docstring). ``artifact`` is the result as read
    (``load_artifact``): already judged again from its cases, one that disagrees with them refused
    (``artifact_inconsistent``) before any check."""
    found = skill_bindings.check_skill(config, skill, collection)
    bindings = Check(
        "skill_bindings",
        not found,
        "\n".join(d.render() for d in found)
        if found
        else f"{len(skill.permissions)} permission(s) and the golden "
        "cases' tools are bound to the collection",
        "skill_binding_unknown" if found else "",
    )
    return [bindings, _policy_exists(skill, config), _policy_published(config, artifact), _decision(artifact)]


def _policy_exists(skill: ReleaseSkill, config: Config) -> Check:
    problems = []
    if not skill.permissions:
        problems.append(f"release.{skill.name}.permissions is empty: the policy eval has nothing to check")
    name = skill.regression_suite or config.learning.regression_suite
    suite = config.suites.get(name or "")
    if not name:
        problems.append(
            f"release.{skill.name} names no regression suite (regression_suite or learning.regression_suite)"
        )
    elif suite is None:
        problems.append(f"regression suite {name!r} is not a suite of qlab.yaml")
    elif not suite.required:
        problems.append(f"regression suite {name!r} is required: false")
    elif not any(name in gate.suites for gate in config.gates):
        problems.append(f"regression suite {name!r} is in no gate: no run runs it")
    if problems:
        return Check("policy_exists", False, "; ".join(problems), "policy_unpublished")
    return Check("policy_exists", True, f"permissions and regression suite {name!r} are in force")


def _policy_published(config: Config, artifact: Artifact | None) -> Check:
    if artifact is None:
        return Check(
            "policy_published", True, "no result artifact yet: the regression and review gates say so"
        )
    fingerprint = artifact.data.get("fingerprint") or {}
    recorded = fingerprint.get("config_digest")
    if recorded and recorded != config.digest:
        then = fingerprint.get("config_variables")
        changed = (
            [name for name, digest in config.variables if then.get(name) != digest]
            if isinstance(then, dict)
            else []
        )
        why = (
            f"the environment variable(s) qlab.yaml reads had other values in that run: "
            f"{', '.join('${' + n + '}' for n in changed)}; release with the values the run had, or run again"
            if changed
            else "run `qlab run` with the qlab.yaml this release uses"
        )
        return Check(
            "policy_published",
            False,
            f"{artifact.path} was judged under another version of qlab.yaml ({str(recorded)[:19]}…, now "
            f"{config.digest[:19]}…): {why}",
            "policy_unpublished",
        )
    return Check("policy_published", True, "the result was judged under the policy in qlab.yaml")


def _decision(artifact: Artifact | None) -> Check:
    """A release judges a result that PASSed: one that blocked, or could not decide, stops it here."""
    if artifact is None:
        return Check("result_passed", True, "no result artifact yet: the regression and review gates say so")
    decision = artifact.data.get("decision") or {}
    verdict = str(decision.get("verdict", "")).upper() or "no decision"
    if decision.get("verdict") == "pass":
        return Check("result_passed", True, f"{artifact.path} PASSed")
    reasons = "; ".join(str(r) for r in (decision.get("reasons") or ())[:3])
    return Check(
        "result_passed",
        False,
        f"{artifact.path} ended {verdict} (exit {decision.get('exit_code')}): {reasons or 'no reason recorded'}; "
        "a release judges a result whose decision is PASS: fix what the run names and run it again",
        "run_not_passed",
    )

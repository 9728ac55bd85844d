"""The quality gate a proposal passes after its sandbox eval, before it may be published.

Three checks, each over side B of the sandbox (the project with the proposal applied in memory):

- **output_schema** — the proposal is a valid change of its kind (a known tool's alias, an accepted knowledge
  entry, a qlab.yaml or case that still validates), and every case object B produced matches the result schema.
- **policy** — the proposal carries no secret value, no read-only execute case of B plans a mutating call, the
  regression suite stays required and gated, and no ``scrub``, ``mutation_safety`` or ``host_allowlist`` guard
  turns to ``warn``.
- **regression_evals** — every active must-pass case that passed in A passes in B, an eval case's own case
  passes in B, and the sandbox's ``regressionCheck`` holds."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.adapters.scrub import secret_variants
from qlab.collection.model import MutationClass
from qlab.contracts.errors import ConfigError
from qlab.contracts.results import json_form, to_json
from qlab.contracts.resultschema import problem
from qlab.engine.knowledge import parse_knowledge
from qlab.governance.learning.apply import Subject, type_of
from qlab.project import schemas
from qlab.project.files import display_path, read_document
from qlab.project.model import Config

STAGE_KEYS = ("search", "target_selector", "plan", "execute", "auth_readiness", "failure")
KEPT_GUARDS = frozenset({"scrub", "mutation_safety", "host_allowlist"})
Side = tuple[str, dict[str, Any], dict[str, Any]]


def gate(
    proposal: Mapping[str, Any],
    figures: Mapping[str, Any],
    *,
    sides: Sequence[Side],
    base: Subject,
    after: Subject,
    secrets: Sequence[str] = (),
) -> dict[str, Any]:
    """``{"passed", "checks": [{name, passed, problems}]}``."""
    checks = [
        _check("output_schema", _schema_problems(proposal, sides, base)),
        _check("policy", _policy_problems(proposal, sides, base, after, secrets)),
        _check("regression_evals", _regression_problems(proposal, figures, sides, base.config)),
    ]
    return {"passed": all(c["passed"] for c in checks), "checks": checks}


def _check(name: str, problems: list[str]) -> dict[str, Any]:
    return {"name": name, "passed": not problems, "problems": problems[:20]}


# ------------------------------------------------------------------------------------------- output schema


def _schema_problems(proposal: Mapping[str, Any], sides: Sequence[Side], base: Subject) -> list[str]:
    out = _change_problems(proposal, base)
    for run_id, _a, b in sides:
        for case in b["cases"]:
            for key in STAGE_KEYS:
                value = case.get(key)
                if value is not None:
                    found = problem(key, json_form(value), f"$.{key}")
                    if found:
                        out.append(f"{run_id}: {case['case_id']}: {found}")
    return out


def _change_problems(proposal: Mapping[str, Any], base: Subject) -> list[str]:
    kind = proposal.get("kind")
    change = proposal.get("change") or {}
    if kind == "alias":
        aliases = proposal.get("aliases") or []
        out = (
            []
            if base.collection.tool(str(proposal.get("tool_id")))
            else [f"{proposal.get('tool_id')!r} is not a tool of the collection"]
        )
        if not aliases or not all(isinstance(a, str) and a.strip() for a in aliases):
            out.append("an alias is a non-empty phrase")
        return out
    if type_of(proposal) == "memory":
        _knowledge, found = parse_knowledge(change, where="the proposed entry")
        return [message for _path, message in found]
    if type_of(proposal) == "policy":
        return _config_problems(base.config, change)
    if kind == "eval_case":
        case = (proposal.get("proposal") or {}).get("case") or {}
        issues = schemas.validate_case(case)
        return [f"the proposed case: {i.text}" for i in issues]
    return []


def _config_problems(config: Config, change: Mapping[str, Any]) -> list[str]:
    """qlab.yaml as written, with the change made to its data, against the config schema."""
    path = Path(config.path)
    try:
        _raw, doc = read_document(path, display=display_path(path))
    except ConfigError as exc:
        return [str(exc)]
    data = json.loads(json.dumps(doc.data))  # a deep copy of plain data
    if "budget" in change:
        data.setdefault("budget", {}).update(change["budget"])
    else:
        gate = next(
            (g for g in data.get("gates") or () if (g.get("name") or g.get("stage")) == change.get("gate")),
            None,
        )
        if gate is None:
            return [f"qlab.yaml has no gate {change.get('gate')!r}"]
        if "add_stop_if" in change:
            spec = change["add_stop_if"]
            name = next(iter(spec)) if isinstance(spec, Mapping) else spec
            kept = [
                s for s in gate.get("stop_if") or () if (next(iter(s)) if isinstance(s, dict) else s) != name
            ]
            gate["stop_if"] = [*kept, dict(spec) if isinstance(spec, Mapping) else spec]
        elif "guard" in change:
            kept = [g for g in gate.get("guards") or () if g.get("name") != change["guard"]]
            gate["guards"] = [*kept, {"name": change["guard"], "mode": change.get("mode", "block")}]
    return [f"qlab.yaml with the change: {i.text}" for i in schemas.validate(data, "config")]


# ------------------------------------------------------------------------------------------- policy


def _secret_values(config: Config, given: Sequence[str]) -> list[str]:
    """The secret values a run would resolve from the environment (the auth profiles' variables)."""
    names: set[str] = set()
    for profile in config.auth_profiles.values():
        names.update(n for n in (profile.token_env, profile.value_env, profile.username_env, profile.password_env,
                                 profile.client_id_env, profile.client_secret_env, *profile.headers.values()) if n)  # fmt: skip
    values = [os.environ[n] for n in sorted(names) if os.environ.get(n)]
    return [*given, *values]


def _policy_problems(
    proposal: Mapping[str, Any], sides: Sequence[Side], base: Subject, after: Subject, secrets: Sequence[str]
) -> list[str]:
    out: list[str] = []
    text = json.dumps(
        {k: v for k, v in proposal.items() if k not in ("sandbox", "evidence")},
        ensure_ascii=False,
        default=to_json,
    )
    for index, secret in enumerate(_secret_values(base.config, secrets)):
        if any(form in text for form in secret_variants(secret)):
            out.append(f"the proposal carries secret #{index + 1}")
    tools = after.collection.by_id()
    for run_id, _a, b in sides:
        for case in b["cases"]:
            if case.get("mode") != "execute" or case.get("mutation_safety", "read_only") != "read_only":
                continue
            planned = (case.get("plan") or {}).get("tools") or ()
            mutating = [t for t in planned if t in tools and tools[t].mutation != MutationClass.READ_ONLY]
            if mutating:
                out.append(
                    f"{run_id}: read-only case {case['case_id']} would plan mutating {', '.join(mutating)}"
                )
    regression = after.config.learning.regression_suite
    if regression:
        suite = after.config.suites.get(regression)
        if suite is None or not suite.required:
            out.append(f"regression suite {regression!r} would no longer be required")
        elif not any(regression in g.suites for g in after.config.gates):
            out.append(f"regression suite {regression!r} would be run by no gate")
    before = {(g.name, guard.name): guard.mode for g in base.config.gates for guard in g.guards}
    for gate_ in after.config.gates:
        for guard in gate_.guards:
            if (
                guard.name in KEPT_GUARDS
                and guard.mode == "warn"
                and before.get((gate_.name, guard.name)) != "warn"
            ):
                out.append(f"gate {gate_.name}: guard {guard.name} would only warn")
    return out


# ------------------------------------------------------------------------------------------- regression evals


def _must_pass(config: Config) -> set[str]:
    """The must-pass suites: category ``regression``, ``must_pass: true``, and ``learning.regression_suite``."""
    out = {name for name, s in config.suites.items() if s.category == "regression" or s.must_pass}
    if config.learning.regression_suite:
        out.add(config.learning.regression_suite)
    return out


def _regression_problems(
    proposal: Mapping[str, Any], figures: Mapping[str, Any], sides: Sequence[Side], config: Config
) -> list[str]:
    out: list[str] = []
    suites = _must_pass(config)
    new_ids = {str(c["case_id"]) for c in (figures.get("regressionCheck") or {}).get("new_failing") or ()}
    for run_id, a, b in sides:
        before = {str(c["case_id"]): c.get("status") for c in a["cases"]}
        for case in b["cases"]:
            if case.get("suite") not in suites or case.get("lifecycle") == "draft":
                continue
            case_id = str(case["case_id"])
            was = before.get(case_id)
            if case.get("status") != "passed" and (was == "passed" or case_id in new_ids):
                failure = case.get("failure") or {}
                out.append(
                    f"{run_id}: regression case {case_id} {case.get('status')} at {failure.get('stage')} ({failure.get('reason')})"
                )
    check = figures.get("regressionCheck") or {}
    if not check.get("passed", True):
        for item in check.get("regressed") or ():
            out.append(
                f"{item['run_id']}: {item['case_id']} passed before, {item['after']} with the proposal"
            )
        for item in check.get("decisions_worse") or ():
            out.append(f"{item['run_id']}: the decision would go from {item['before']} to {item['after']}")
        for item in check.get("new_failing") or ():
            text = f"{item['run_id']}: the proposed case {item['case_id']} {item['after']} ({item.get('reason')})"
            if text not in out:
                out.append(text)
    return list(dict.fromkeys(out))

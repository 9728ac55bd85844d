"""Regression prevention: a real failure → an EvalCase proposal → review → the regression suite.

``propose`` turns a failing case of a result artifact into a proposal (``schemas/proposal.schema.json``):
``status: pending_review``, the ``input`` (query, entities, LLM target), the ``expected`` behaviour (the case's
expectations; with a corrected run, also what the successful run did), the ``traceEvidence`` (the failing
case's stage objects, and the corrected ones), ``tags``, a ``description``, and — with a corrected run — the
``key_difference`` between failure and success: the first stage whose object differs, every field that
differs, and what differs in the two runs' fingerprints (collection, config, engine, model).

``qlab accept-case`` (``qlab.governance.learning.accept``) moves an approved proposal into the regression suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts.errors import InputError
from qlab.contracts.metrics import MODE_STAGES
from qlab.governance.records import STAGE_KEYS, Artifact, content_id, evidence, now_iso
from qlab.project.model import Case
from qlab.run.boundary import below_minimum

PENDING = "pending_review"
# The fields of each stage object that tell a failure from a success, in pipeline order.
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "search": ("hit", "hit_rank"),
    "target_selector": ("selected_target", "llm_target", "overrode_llm", "reason_codes"),
    "plan": ("status", "tools", "user_input_slots"),
    "execute": ("http_status",),
    "auth_readiness": ("status", "reason_codes"),
}
FINGERPRINT_FIELDS: tuple[str, ...] = (
    "collection_digest",
    "config_digest",
    "engine",
    "model",
    "model_settings",
    "git_commit",
)
_CASE_KEYS = ("mode", "query", "expected_target", "expected_top_k", "provided_entities", "llm_target",
              "expected_plan_tools", "assertions", "mutation_safety", "cleanup", "captures", "timeout_sec",
              "follow_redirects", "tags")  # fmt: skip


def _case_result(artifact: Artifact, case_id: str) -> Mapping[str, Any]:
    found = next((c for c in artifact.cases if c["case_id"] == case_id), None)
    if found is None:
        ids = [c["case_id"] for c in artifact.cases]
        raise InputError(f"{artifact.path}: no case {case_id!r} in the result.{did_you_mean(case_id, ids)}")
    return found


def propose(
    artifact: Artifact,
    case_id: str,
    *,
    case: Case | None,
    corrected: Artifact | None = None,
    description: str = "",
    now: str | None = None,
) -> dict[str, Any]:
    """The EvalCase proposal for failing case ``case_id`` of ``artifact`` (see the module docstring).

    ``case`` is the project's case (its query and expectations as written). Raises InputError when the case
    is missing, passed, or (with ``corrected``) did not pass in the corrected run.
    """
    failing = _case_result(artifact, case_id)
    shortfall = _shortfall(failing)
    if failing.get("status") == "passed" and shortfall is None:
        raise InputError(
            f"{artifact.path}: case {case_id!r} passed; only a real failure becomes a regression proposal"
        )
    fixed: Mapping[str, Any] | None = None
    if corrected is not None:
        fixed = _case_result(corrected, case_id)
        if fixed.get("status") != "passed":
            raise InputError(
                f"{corrected.path}: case {case_id!r} is {fixed.get('status')} in the corrected run; "
                "the corrected run must show the success"
            )
    written = _as_written(case, failing, artifact)
    failure = failing.get("failure") or shortfall or {}
    text = description or _default_description(case_id, failure, fixed is not None)
    expected: dict[str, Any] = {
        k: written[k]
        for k in ("expected_target", "expected_top_k", "expected_plan_tools", "assertions")
        if k in written
    }
    if fixed is not None:
        expected["observed_success"] = _observed(fixed)
    tags = list(
        dict.fromkeys(
            ["regression", "from_failure", *(str(failure[k]) for k in ("stage", "reason") if failure.get(k))]
        )
    )
    source = {
        "case_id": case_id,
        "suite": failing.get("suite"),
        "file": failing.get("file"),
        "line": failing.get("line"),
        "run_id": artifact.run_id,
        "result": artifact.path,
        "result_digest": artifact.digest,
    }
    proposal: dict[str, Any] = {
        "type": "EvalCaseProposal",
        "id": content_id("prop-", [case_id, artifact.digest, corrected.digest if corrected else None]),
        "status": PENDING,
        "created_at": now or now_iso(),
        "description": text,
        "tags": tags,
        "source": source,
        "input": {
            k: written[k] for k in ("mode", "query", "provided_entities", "llm_target") if k in written
        },
        "expected": expected,
        "traceEvidence": {
            "failing": evidence(failing),
            "guardResults": guard_results(artifact.data, failing),
        },
        "case": _proposed_case(
            {k: v for k, v in written.items() if k != "tags"} | {"tags": written.get("tags", [])},
            case_id,
            tags,
            text,
        ),
    }
    if corrected is not None and fixed is not None:
        proposal["corrected"] = {
            "run_id": corrected.run_id,
            "result": corrected.path,
            "result_digest": corrected.digest,
        }
        proposal["traceEvidence"]["corrected"] = evidence(fixed)
        proposal["key_difference"] = key_difference(failing, fixed, artifact, corrected)
        if "expected_plan_tools" not in proposal["case"] and (fixed.get("plan") or {}).get("tools"):
            # the successful run's plan is the expected behaviour the case did not spell out
            proposal["case"]["expected_plan_tools"] = list(fixed["plan"]["tools"])
    return proposal


GUARDS_KEPT = 20  # in-run check records a proposal keeps


def guard_results(run: Mapping[str, Any], case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The in-run checks of ``run`` at the stages ``case`` went through (up to the one it failed at): the
    ``guardResults`` of its trace evidence, each ``{guard, stage, gate, passed, mode, message}``."""
    stages = list(MODE_STAGES.get(str(case.get("mode")), ()))
    failed_at = (case.get("failure") or {}).get("stage")
    if failed_at in stages:
        stages = stages[: stages.index(failed_at) + 1]
    guards = run.get("guards")
    if not isinstance(guards, list):
        guards = [g for s in (run.get("stages") or {}).values() for g in (s or {}).get("guards") or ()]
    keys = ("guard", "stage", "gate", "passed", "mode", "message", "reason")
    found = [
        {k: g[k] for k in keys if k in g}
        for g in guards
        if isinstance(g, Mapping) and g.get("stage") in stages
    ]
    return found[:GUARDS_KEPT]


def _shortfall(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """A passed case's in-run claims shortfall (below its citation or evidence minimum, where the check only
    warns), as the failure it is: a real failure a regression case can come from. None without one."""
    record = (
        (result.get("execute") or {}).get("claims") if isinstance(result.get("execute"), Mapping) else None
    )
    found = below_minimum(str(result.get("case_id")), record) if isinstance(record, Mapping) else []
    if not found:
        return None
    guard, reason, text = found[0]
    return {"stage": "execute", "reason": reason, "message": f"the in-run {guard} check: {text}"}


def _as_written(case: Case | None, result: Mapping[str, Any], artifact: Artifact) -> dict[str, Any]:
    """The case's fields as its file has them (or, without the project's case, what the result carries)."""
    if case is not None:
        raw = dict(case.raw) if case.raw else {}
        out = {k: raw[k] for k in _CASE_KEYS if k in raw}
        out.setdefault("mode", case.mode)
        out.setdefault("query", case.query)
        if case.expected_target:
            out.setdefault("expected_target", case.expected_target)
        if case.provided_entities:
            out.setdefault("provided_entities", dict(case.provided_entities))
        return out
    if isinstance(result.get("query"), str):
        return {k: result[k] for k in _CASE_KEYS if k in result}
    raise InputError(
        f"{artifact.path}: case {result['case_id']!r} is not in the project and the result does not carry its "
        "query; run propose-case with the qlab.yaml the result came from (--config)"
    )


def _proposed_case(
    written: Mapping[str, Any], case_id: str, tags: list[str], description: str
) -> dict[str, Any]:
    """The case file entry: the case as written, a new id, the regression tag (+ failure stage and reason)."""
    case: dict[str, Any] = {"id": f"reg-{case_id}", **written}
    case["tags"] = list(dict.fromkeys(["regression", *written.get("tags", ()), *tags[2:]]))
    case["description"] = description
    return case


def _observed(result: Mapping[str, Any]) -> dict[str, Any]:
    search = result.get("search") or {}
    selector = result.get("target_selector") or {}
    plan = result.get("plan") or {}
    execute = result.get("execute") or {}
    out = {
        "hit_rank": search.get("hit_rank"),
        "selected_target": selector.get("selected_target"),
        "plan_status": plan.get("status"),
        "plan_tools": plan.get("tools"),
        "http_status": execute.get("http_status"),
    }
    return {k: v for k, v in out.items() if v is not None}


def key_difference(
    failing: Mapping[str, Any], fixed: Mapping[str, Any], run: Artifact, corrected: Artifact
) -> dict[str, Any]:
    """What tells the failure from the success: changed stage fields (first stage first) and fingerprint."""
    changes: list[dict[str, Any]] = []
    for stage in STAGE_KEYS:
        a, b = failing.get(stage) or {}, fixed.get(stage) or {}
        for name in KEY_FIELDS.get(stage, ()):
            if a.get(name) != b.get(name):
                changes.append({"path": f"{stage}.{name}", "failing": a.get(name), "corrected": b.get(name)})
    fa, fb = run.data.get("fingerprint") or {}, corrected.data.get("fingerprint") or {}
    fingerprint: list[dict[str, Any]] = [
        {"field": f, "failing": fa.get(f), "corrected": fb.get(f)}
        for f in FINGERPRINT_FIELDS
        if fa.get(f) != fb.get(f)
    ]
    failure = failing.get("failure") or {}
    first: str | None = str(changes[0]["path"]).split(".")[0] if changes else None
    summary = f"failed at {failure.get('stage')}/{failure.get('reason')}; passes in the corrected run"
    if changes:
        summary += "; first difference at " + ", ".join(
            f"{c['path']} {c['failing']!r} -> {c['corrected']!r}"
            for c in changes
            if c["path"].startswith(f"{first}.")
        )
    if fingerprint:
        summary += "; the runs differ in " + ", ".join(f["field"] for f in fingerprint)
    return {"stage": first, "changes": changes, "fingerprint": fingerprint, "summary": summary}


def _default_description(case_id: str, failure: Mapping[str, Any], corrected: bool) -> str:
    where = f"{failure.get('stage')}/{failure.get('reason')}" if failure else "an unknown stage"
    text = f"{case_id} failed at {where}"
    message = failure.get("message") if failure else None
    if message:
        text += f": {message}"
    return text + ("; fixed in a corrected run" if corrected else "")

"""The last three release gates of a skill; the first two are in ``release_stages``.

3. policy_eval — every tool of every golden plan is permitted; no plan has more than ``max_tool_calls`` steps;
   the run's recorded LLM cost (plus the functional eval's) is within ``max_cost_usd``; the p95 of the run's
   per-case latency (the sum of a case's stage latencies) is within ``max_latency_ms``.
4. regression_eval — the regression suite is configured and required, the result artifact is of the collection
   being released, and every active case of the suite ran in it and passed (draft cases are listed, not
   required; archived ones are not run).
5. human_review — the latest review of this skill bound to the sha256 of the evaluated result artifact (the last
   one recorded) is an approval (an approval of another or older result does not count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.collection.model import Collection
from qlab.governance.records import Artifact
from qlab.governance.release.stages import GateResult, gate_result, permitted
from qlab.project.model import Case, Config, ReleaseSkill

# ------------------------------------------------------------------------------------------- 3. policy


def policy_eval(
    skill: ReleaseSkill,
    golden: Sequence[Mapping[str, Any]],
    *,
    collection: Collection,
    artifact: Artifact | None,
) -> GateResult:
    reasons: list[str] = []
    for run in golden:
        outside = [t for t in run.get("plan_tools") or () if not permitted(t, skill, collection)]
        if outside:
            reasons.append(
                f"{run['id']}: plan uses {', '.join(outside)}, outside the permissions {list(skill.permissions)}"
            )
        if skill.max_tool_calls is not None and run.get("steps", 0) > skill.max_tool_calls:
            reasons.append(f"{run['id']}: {run['steps']} tool calls > max_tool_calls {skill.max_tool_calls}")
    cases = artifact.cases if artifact is not None else []
    cost = sum(float(r.get("llm_cost_usd") or 0.0) for r in golden) + _recorded_cost(cases)
    metrics: dict[str, Any] = {
        "llm_cost_usd": round(cost, 6),
        "max_tool_calls_seen": max((r.get("steps", 0) for r in golden), default=0),
    }
    if (skill.max_cost_usd is not None or skill.max_latency_ms is not None) and artifact is None:
        reasons.append("the cost/latency budget is taken from the run: pass the result artifact (--result)")
    if skill.max_cost_usd is not None and cost > skill.max_cost_usd:
        reasons.append(f"LLM cost {cost:.4f} USD > max_cost_usd {skill.max_cost_usd}")
    if skill.max_latency_ms is not None and artifact is not None:
        totals = sorted(
            sum(float(v) for v in (c.get("latency_ms") or {}).values()) for c in cases if c.get("latency_ms")
        )
        if not totals:
            reasons.append("the run recorded no case latency to check max_latency_ms against")
        else:
            p95 = totals[max(0, math.ceil(0.95 * len(totals)) - 1)]
            metrics["latency_p95_ms"] = round(p95, 3)
            if p95 > skill.max_latency_ms:
                reasons.append(f"p95 case latency {p95:.1f} ms > max_latency_ms {skill.max_latency_ms}")
    return gate_result("policy_eval", reasons, metrics, {})


def _recorded_cost(cases: Sequence[Mapping[str, Any]]) -> float:
    total = 0.0
    for case in cases:
        usage = (case.get("target_selector") or {}).get("llm_usage") or {}
        if isinstance(usage.get("cost_usd"), (int, float)):
            total += float(usage["cost_usd"])
    return total


# ------------------------------------------------------------------------------------------- 4. regression


def regression_eval(
    skill: ReleaseSkill,
    *,
    config: Config,
    suite_cases: Sequence[Case],
    collection: Collection,
    artifact: Artifact | None,
) -> GateResult:
    name = skill.regression_suite or config.learning.regression_suite
    if not name:
        return gate_result(
            "regression_eval",
            ["no regression suite: set release.<skill>.regression_suite or learning.regression_suite"],
            {},
            {},
        )
    suite = config.suites.get(name)
    reasons: list[str] = []
    if suite is None:
        reasons.append(f"regression suite {name!r} is not a suite of qlab.yaml")
    elif not suite.required:
        reasons.append(
            f"regression suite {name!r} is required: false; every release must pass it, so mark it required"
        )
    if artifact is None:
        reasons.append("no result artifact: run `qlab run` and pass --result")
        return gate_result("regression_eval", reasons, {}, {"suite": name})
    recorded = (artifact.data.get("fingerprint") or {}).get("collection_digest")
    if recorded and collection.digest and recorded != collection.digest:
        reasons.append(
            f"the result is of another collection ({recorded[:19]}…, now {collection.digest[:19]}…): run `qlab run` again"
        )
    results = {c["case_id"]: c for c in artifact.cases if c.get("suite") == name}
    # draft cases run and are reported but never gate; archived cases do not run
    expected = [c.id for c in suite_cases if c.status == "active"]
    drafts = [c.id for c in suite_cases if c.status == "draft"]
    if not expected:
        reasons.append(
            f"regression suite {name!r} has no cases: accept a proposal (`qlab accept-case`) first"
        )
    for case_id in expected:
        result = results.get(case_id)
        if result is None:
            reasons.append(f"{case_id} did not run in the result (run the whole suite)")
        elif result.get("status") != "passed":
            failure = result.get("failure") or {}
            reasons.append(
                f"{case_id}: {result.get('status')} at {failure.get('stage')}/{failure.get('reason')}"
            )
    passed = sum(1 for c in expected if (results.get(c) or {}).get("status") == "passed")
    details: dict[str, Any] = {"suite": name}
    if drafts:
        details["draft_cases"] = drafts  # reported, not required
    return gate_result("regression_eval", reasons, {"cases": len(expected), "passed": passed}, details)


# ------------------------------------------------------------------------------------------- 5. human review


def human_review(
    skill: ReleaseSkill, approvals: Sequence[Mapping[str, Any]], *, artifact: Artifact | None
) -> GateResult:
    if artifact is None:
        return gate_result("human_review", ["no evaluated result artifact to review"], {}, {})
    mine = [a for a in approvals if a.get("skill") == skill.name]
    bound = [a for a in mine if a.get("result_digest") == artifact.digest]
    if not bound:
        others = sorted({f"{a.get('result_digest', '?')[:19]}… by {a.get('reviewer')}" for a in mine})
        reason = f"no review of this result ({artifact.digest}); run `qlab approve {skill.name} --result {artifact.path} --by NAME`"
        if others:
            reason += f"; reviews of other results do not count: {', '.join(others)}"
        return gate_result("human_review", [reason], {}, {"result_digest": artifact.digest})
    latest = bound[-1]  # the last one recorded: the file is appended to in order (two may share a second)
    details = {"result_digest": artifact.digest, "reviewer": latest.get("reviewer"), "at": latest.get("at")}
    if latest.get("decision") != "approved":
        note = f": {latest.get('note')}" if latest.get("note") else ""
        what = "asked for a new run of" if latest.get("decision") == "regenerate" else "rejected"
        return gate_result(
            "human_review", [f"{latest.get('reviewer')} {what} this result{note}"], {}, details
        )
    return gate_result("human_review", [], {}, details)

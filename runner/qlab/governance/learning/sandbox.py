"""Sandbox eval: a proposal replayed against historical runs, A/B, before anyone may publish it.

**A** is the project as it is; **B** the project with the proposal applied in memory
(``qlab.governance.learning.apply``). No file is written and no request sent. Both sides replay the same inputs
(every search, plan and execute case of the history the project still has, plus the ``affected`` cases no stored
run holds) through the real search, select and plan stages on a fresh engine (``replay``). A policy proposal
replays nothing: both sides judge the stored cases under the two policies (``qlab.governance.learning.rejudge``).

Each side is judged like a run and scored; ``compare`` gives the five figures: ``scorecardDelta``,
``regressionCheck``, ``improvementCheck``, ``costDelta`` and ``latencyDelta`` (each B - A). Then the quality gate
(``qlab.governance.learning.quality``). ``qlab learn accept`` publishes only a proposal whose stored sandbox passed
its quality gate."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from qlab.collection.model import Collection
from qlab.contracts import metrics
from qlab.contracts.errors import InputError
from qlab.contracts.metrics import SCORECARD_DIMENSIONS as DIMENSIONS
from qlab.contracts.results import CaseResult
from qlab.engine.base import Engine
from qlab.engine.knowledge import load_knowledge, with_knowledge
from qlab.engine.text import Analyzer
from qlab.governance.learning import quality, rejudge
from qlab.governance.learning.apply import Subject, applicable, subject_with, type_of
from qlab.governance.records import Artifact, now_iso
from qlab.project.build_case import build_case
from qlab.project.model import NO_ORIGIN, Case, Config, Gate
from qlab.run import artifact as artifact_mod
from qlab.run import gates, postrun
from qlab.run.lanes import new_result
from qlab.run.selection import gate_suites
from qlab.stages.context import RunContext

REPLAYED_STAGES = ("search", "select", "plan")
# the side of the cases a proposal affects that no stored run holds (a suite the stored runs did not select)
OUTSIDE = "(cases no stored run holds)"
EVALUATED = frozenset({"passed", "failed", "error"})
VERDICT_ORDER = {"pass": 0, "block": 1, "error": 2}
MakeEngine = Callable[[Subject], Engine]


def real_engine(subject: Subject) -> Engine:
    """The engine of the subject's config over its collection, with its knowledge applied."""
    registry = importlib.import_module("qlab.engine.registry")
    engine: Engine = registry.make_engine(
        subject.config.engine, subject.collection, base_dir=Path(subject.config.path).parent
    )
    return with_knowledge(engine, subject.knowledge)


def base_subject(config: Config, collection: Collection) -> Subject:
    """The project as it is: its config, collection and knowledge file."""
    knowledge = load_knowledge(config.learning.knowledge_file, base_dir=Path(config.path).parent)
    return Subject(config, collection, knowledge)


# ------------------------------------------------------------------------------------------- replay


def replay(
    subject: Subject,
    cases: Sequence[Case],
    *,
    stored: Mapping[str, Mapping[str, Any]],
    make_engine: MakeEngine = real_engine,
) -> list[dict[str, Any]]:
    """The cases as the subject's engine handles them now: search → select → plan, in memory. No request is
    sent: an execute case takes ``stored[case_id]``'s execute outcome when the plan calls the same tools;
    otherwise it is ``not_replayed`` and judged, on both sides alike, on the stages replayed."""
    config = subject.config
    engine = make_engine(subject)
    root = Path(config.path).parent
    results = {c.id: new_result(c, config, root=root) for c in cases}
    ctx = RunContext(
        config=config, collection=subject.collection, engine=engine, gate=Gate("sandbox", "search")
    )
    try:
        for stage in REPLAYED_STAGES:
            ctx.gate = Gate(f"sandbox-{stage}", stage)  # type: ignore[arg-type]
            module = importlib.import_module(f"qlab.stages.{stage}")
            module.run(ctx, [c for c in cases if not results[c.id].done], results)
    finally:
        close = getattr(engine, "close", None)
        if callable(close):
            close()
    for case in cases:
        if case.mode == "execute" and not results[case.id].done:
            _stored_execute(results[case.id], stored.get(case.id))
    dicts = [results[c.id].to_dict() for c in cases]
    postrun.annotate(dicts, {c.id: c.expected_plan_tools for c in cases if c.expected_plan_tools})
    return dicts


def _stored_execute(result: CaseResult, before: Mapping[str, Any] | None) -> None:
    """An execute case takes its stored execute outcome when its replayed plan calls the same tools."""
    planned = (result.plan or {}).get("tools")
    if before is None or before.get("execute") is None or (before.get("plan") or {}).get("tools") != planned:
        result.fail(
            "execute",
            "not_replayed",
            "the sandbox sends no request, and no stored run executed this plan",
            status="skipped",
        )
        return
    result.execute = dict(before["execute"])
    result.auth_readiness = before.get("auth_readiness")
    result.mutation_safety = str(before.get("mutation_safety") or "read_only")
    failure = before.get("failure") or {}
    if before.get("status") != "passed" and failure.get("stage") == "execute":
        result.fail(
            "execute", str(failure.get("reason")), str(failure.get("message", "")), status=before["status"]
        )


# ------------------------------------------------------------------------------------------- judging


def judged(
    config: Config,
    cases: list[dict[str, Any]],
    *,
    duration_ms: float,
    guards: Mapping[str, list[Mapping[str, Any]]] | None = None,
    run_id: str = "sandbox",
) -> dict[str, Any]:
    """An artifact of ``cases`` judged under ``config``'s gates and budget, with metrics and scorecard (each gate
    judges all of its cases: the sandbox compares gate by gate, it does not stop at the first block)."""
    suites = {name: {k: getattr(s, k, None) for k in artifact_mod.SUITE_KEYS} for name, s in config.suites.items()
              if any(c["suite"] == name for c in cases)}  # fmt: skip
    rules = gates.suite_rules(suites)
    records: list[dict[str, Any]] = []
    judged_specs: list[gates.GateSpec] = []
    for gate in config.gates:
        if gate.stage in ("build", "learn"):
            continue
        spec = gates.GateSpec.from_config(gate, suites=gate_suites(config, gate))
        members = [c for c in cases if c["suite"] in spec.suites]
        if not members:
            continue
        suite_metrics = {
            s: metrics.case_metrics([c for c in members if c["suite"] == s])
            for s in spec.suites
            if any(c["suite"] == s for c in members)
        }
        stage_guards = list((guards or {}).get(gate.stage, ()))
        records.append(
            gates.evaluate(
                spec,
                cases=members,
                suite_metrics=suite_metrics,
                stage_metrics={},
                rules=rules,
                earlier=judged_specs,
                guards=stage_guards,
            )
        )
        judged_specs.append(spec)
    out: dict[str, Any] = {
        "schema_version": artifact_mod.SCHEMA_VERSION,
        "run_id": run_id,
        "duration_ms": round(duration_ms, 3),
        "provenance": {
            "model": None if config.engine.llm is None else config.engine.llm.model,
            "run_configuration": {"engine": config.engine.type, "budget": asdict(config.budget)},
        },
        "cases": cases,
        "suites": suites,
        "stages": {},
        "gates": records,
        "prerun": [],
    }
    return artifact_mod.summarize(out, budget=config.budget)


# ------------------------------------------------------------------------------------------- the A/B


@dataclasses.dataclass(frozen=True, slots=True)
class History:
    """The historical runs a sandbox replays, and the project's cases."""

    runs: tuple[Artifact, ...]
    cases: tuple[Case, ...]

    def replayable(self) -> tuple[list[Case], dict[str, Mapping[str, Any]], list[str]]:
        """The project's cases any run of the history holds (once), their latest stored results, and the ids
        of the history the project no longer has."""
        by_id = {c.id: c for c in self.cases}
        stored: dict[str, Mapping[str, Any]] = {}
        gone: list[str] = []
        for run in self.runs:  # later runs win: they come last
            for result in run.cases:
                case_id = str(result["case_id"])
                if case_id in by_id:
                    stored[case_id] = result
                elif case_id not in gone:
                    gone.append(case_id)
        chosen = [by_id[i] for i in by_id if i in stored and by_id[i].status != "archived"]
        return chosen, stored, gone


def run_sandbox(
    proposal: Mapping[str, Any],
    *,
    history: History,
    base: Subject,
    make_engine: MakeEngine = real_engine,
    secrets: Sequence[str] = (),
    now: str | None = None,
) -> dict[str, Any]:
    """The sandbox eval of ``proposal`` (see the module docstring): the A/B figures, both sides' summaries and
    the quality gate. Raises InputError when there is nothing to replay."""
    kind = type_of(proposal)
    head: dict[str, Any] = {
        "at": now or now_iso(),
        "type": kind,
        "history": [{"run_id": r.run_id, "result": r.path, "result_digest": r.digest} for r in history.runs],
    }
    if not applicable(proposal):
        return {**head, "replayed": 0, "note": "a note for a person: nothing to apply, nothing to replay",
                "qualityGate": {"passed": False, "checks": [], "reason": "nothing to publish"}}  # fmt: skip
    if not history.runs:
        raise InputError(
            "no historical run to replay: pass a result artifact (--result) of an earlier qlab run"
        )
    if kind == "eval_case" and base.config.suites.get(base.config.learning.regression_suite or "") is None:
        why = "learning.regression_suite names no suite of qlab.yaml: an accepted eval case would have nowhere to go"
        note = f"not run: {why}; name the suite it would join, then run the sandbox again"
        return {
            **head,
            "replayed": 0,
            "note": note,
            "qualityGate": {"passed": False, "checks": [], "reason": why},
        }
    after = subject_with(proposal, base, case_of=lambda data: _case_of(data, base.config))
    if kind == "policy":
        sides = [
            rejudge.sides(run.data, base.config, after.config, run_id=run.run_id) for run in history.runs
        ]
    else:
        cases, stored, gone = history.replayable()
        head["not_in_project"] = gone[:20]
        held = {c.id for c in cases}
        outside = affected(
            proposal, [c for c in history.cases if c.id not in held and c.status != "archived"]
        )
        a_cases = replay(base, [*cases, *outside], stored=stored, make_engine=make_engine)
        b_cases = replay(
            after, [*cases, *outside, *after.extra_cases], stored=stored, make_engine=make_engine
        )
        runs = [(run.run_id, {str(c["case_id"]) for c in run.cases}) for run in history.runs]
        if outside:
            runs.append((OUTSIDE, {c.id for c in outside}))
        sides = [
            _replayed_sides(name, ids, a_cases, b_cases, base.config, after.config) for name, ids in runs
        ]
    out = {**head, **compare(sides, extra=[c.id for c in after.extra_cases], stricter=tightens(proposal))}
    out["qualityGate"] = quality.gate(proposal, out, sides=sides, base=base, after=after, secrets=secrets)
    return out


def _case_of(data: Mapping[str, Any], config: Config) -> Case:
    """The proposed case as a case of the regression suite (it has no file yet)."""
    suite = config.suites[config.learning.regression_suite or ""]  # run_sandbox checked it names a suite
    case = dict(data)
    case.pop("mode", None)  # the suite's mode applies, as accept-case does
    origins = [NO_ORIGIN] * len(case.get("assertions") or ())
    return build_case(case, suite=suite, file="", origin=NO_ORIGIN, assertion_origins=origins)


Side = tuple[str, dict[str, Any], dict[str, Any]]  # (run id, A artifact, B artifact)


def affected(proposal: Mapping[str, Any], cases: Sequence[Case]) -> list[Case]:
    """The ``cases`` a proposal can change: for an alias, each case whose query holds a word of the alias or that
    expects the aliased tool (as its target or in its plan); for a query rewrite, each whose query holds the
    rewritten word; for an entity default, each plan or execute case that does not give that entity itself."""
    kind = proposal.get("kind")
    change = proposal.get("change") or {}
    analyzer = Analyzer()
    if kind == "alias":
        tool = str(proposal.get("tool_id"))
        terms = {t for alias in proposal.get("aliases") or () for t in analyzer.terms(str(alias))}
        return [
            c
            for c in cases
            if c.expected_target == tool
            or tool in (c.expected_plan_tools or ())
            or terms & set(analyzer.terms(c.query))
        ]
    if kind == "query_rewrite":
        words = {str(w).lower() for w in change.get("query_rewrites") or {}}
        return [c for c in cases if words & {w.lower() for w, _term in analyzer.words(c.query)}]
    if kind == "entity_default":
        names = set(change.get("entity_defaults") or {})
        return [c for c in cases if c.mode != "search" and names - set(c.provided_entities or {})]
    return []


def _replayed_sides(
    run_id: str,
    mine: set[str],
    a_cases: list[dict[str, Any]],
    b_cases: list[dict[str, Any]],
    a: Config,
    b: Config,
) -> Side:
    """One historical run's share of the replay (``mine``: the ids of its cases), and on B the proposed cases."""
    known = {str(c["case_id"]) for c in a_cases}
    a_mine = [c for c in a_cases if c["case_id"] in mine]
    b_mine = [c for c in b_cases if c["case_id"] in mine or c["case_id"] not in known]
    return (
        run_id,
        judged(a, _copies(a_mine), duration_ms=_time(a_mine), run_id=f"{run_id}/A"),
        judged(b, _copies(b_mine), duration_ms=_time(b_mine), run_id=f"{run_id}/B"),
    )


def _copies(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [dict(c) for c in cases]


def _time(cases: Sequence[Mapping[str, Any]]) -> float:
    return sum(float(v) for c in cases for v in (c.get("latency_ms") or {}).values())


# ------------------------------------------------------------------------------------------- the figures


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(b - a, 6)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return None if not present else round(sum(present) / len(present), 6)


def tightens(proposal: Mapping[str, Any]) -> bool:
    """A policy proposal that makes the gates stricter (a stop condition added, a check made to block): a run it
    stops is what it was proposed for, not a regression."""
    change = proposal.get("change") or {}
    kind = proposal.get("kind")
    return kind == "stop_condition" or (kind == "guard_mode" and change.get("mode") == "block")


def compare(sides: Sequence[Side], *, extra: Sequence[str] = (), stricter: bool = False) -> dict[str, Any]:
    """The five figures over every historical run (means for the scorecard, sums for cost and latency).
    ``stricter``: the proposal tightens the policy (``tightens``): a run whose decision it turns to block is
    listed as stopped by it (``improvementCheck.decisions_stopped``), not as a decision that got worse."""
    regressed: list[dict[str, Any]] = []
    improved: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    deltas: dict[str, list[float | None]] = {d: [] for d in DIMENSIONS}
    cost = {"llm_cost_usd": 0.0, "llm_tokens": 0}
    latency = 0.0
    replayed = not_replayed = 0
    new_cases: list[dict[str, Any]] = []
    for run_id, a, b in sides:
        for dimension in DIMENSIONS:
            deltas[dimension].append(_delta(a["scorecard"].get(dimension), b["scorecard"].get(dimension)))
        before = {str(c["case_id"]): c for c in a["cases"]}
        for case in b["cases"]:
            case_id = str(case["case_id"])
            old = before.get(case_id)
            if case.get("status") == "skipped":
                not_replayed += 1
            elif case.get("status") in EVALUATED:
                replayed += 1
            if old is None:
                if case_id in extra:
                    new_cases.append(_outcome(run_id, case_id, None, case))
                continue
            # like with like: an execute case the sandbox cannot execute is judged on the stages it replays,
            # on both sides (passing search, select and plan as is, failing select with the proposal: worse)
            if metrics.gating(case) and _passes(old) and _fails(case):
                regressed.append(_outcome(run_id, case_id, old, case))
            elif _fails(old) and _passes(case):
                improved.append(_outcome(run_id, case_id, old, case))
        verdicts = (a["decision"]["verdict"], b["decision"]["verdict"])
        decisions.append({"run_id": run_id, "before": verdicts[0], "after": verdicts[1]})
        a_tokens, a_cost = metrics.llm_usage(a["cases"])
        b_tokens, b_cost = metrics.llm_usage(b["cases"])
        cost["llm_cost_usd"] += b_cost - a_cost
        cost["llm_tokens"] += b_tokens - a_tokens
        latency += _time(b["cases"]) - _time(a["cases"])
    # an undecided side (a policy that lets a run past the gate that stopped it) is neither worse nor better
    known = [d for d in decisions if d["before"] in VERDICT_ORDER and d["after"] in VERDICT_ORDER]
    worse = [d for d in known if VERDICT_ORDER[d["after"]] > VERDICT_ORDER[d["before"]]]
    better = [d for d in known if VERDICT_ORDER[d["after"]] < VERDICT_ORDER[d["before"]]]
    stopped = [d for d in worse if d["after"] == "block"] if stricter else []
    worse = [d for d in worse if d not in stopped]
    new_passing = [c for c in new_cases if c["after"] == "passed"]
    new_failing = [c for c in new_cases if c["after"] != "passed"]
    return {
        "replayed": replayed,
        "not_replayed": not_replayed,
        "scorecardDelta": {d: _mean(v) for d, v in deltas.items()},
        "regressionCheck": {
            "passed": not regressed and not worse and not new_failing,
            "regressed": regressed[:50],
            "decisions_worse": worse,
            "new_failing": new_failing,
        },
        "improvementCheck": {
            "passed": bool(improved or better or new_passing or stopped),
            "improved": improved[:50],
            "decisions_better": better,
            "decisions_stopped": stopped,
            "new_passing": new_passing,
        },
        "costDelta": {"llm_cost_usd": round(cost["llm_cost_usd"], 8), "llm_tokens": cost["llm_tokens"]},
        "latencyDelta": {"replayed_ms": round(latency, 3)},
        "decisions": decisions,
        "before": _summary([side[1] for side in sides]),
        "after": _summary([side[2] for side in sides]),
    }


NOT_EXECUTED = "passed through plan (execute not replayed)"


def state(case: Mapping[str, Any] | None) -> str | None:
    """A replayed case's outcome as both sides can judge it: its status, or for an execute case the sandbox
    could not execute (``not_replayed``), that it passed every stage the sandbox replays."""
    if case is None:
        return None
    failure = case.get("failure") or {}
    if case.get("status") == "skipped" and failure.get("reason") == "not_replayed":
        return NOT_EXECUTED
    return str(case.get("status"))


def _passes(case: Mapping[str, Any]) -> bool:
    return state(case) in ("passed", NOT_EXECUTED)


def _fails(case: Mapping[str, Any]) -> bool:
    return case.get("status") in ("failed", "error")


def _outcome(
    run_id: str, case_id: str, old: Mapping[str, Any] | None, new: Mapping[str, Any]
) -> dict[str, Any]:
    failure = new.get("failure") or {}
    out = {"run_id": run_id, "case_id": case_id, "before": state(old), "after": state(new)}
    if failure:
        out["reason"] = failure.get("reason")
    return out


def _summary(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One side's scorecard (mean over the runs), acceptance metrics of the latest run and every verdict."""
    cards = [run["scorecard"] for run in runs]
    return {
        "scorecard": {d: _mean([c.get(d) for c in cards]) for d in DIMENSIONS},
        "metrics": {k: v for k, v in runs[-1]["metrics"].items() if k != "latency_ms"},
        "verdicts": [run["decision"]["verdict"] for run in runs],
    }


# ------------------------------------------------------------------------------------------- activation


def replays_passing(
    case: Case, *, base: Subject, stored: Mapping[str, Any] | None, make_engine: MakeEngine = real_engine
) -> str | None:
    """None when ``case`` passes on the project as it is (replayed in memory; an execute case needs a stored run
    in which it executed and passed), else why not."""
    (result,) = replay(base, [case], stored={case.id: stored} if stored else {}, make_engine=make_engine)
    if result["status"] == "passed":
        return None
    failure = result.get("failure") or {}
    if failure.get("reason") == "not_replayed":
        return (
            "an execute case is not replayed in the sandbox (it would send requests) and no stored run executed "
            "this plan and passed; run it as a draft (qlab run) and activate it once it passed"
        )
    return f"the sandbox replay fails at {failure.get('stage')} ({failure.get('reason')}): {failure.get('message', '')}".rstrip(
        ": "
    )


def activation_check(config_path: Path) -> Callable[[Case], str | None]:
    """The quality gate a case meets before it becomes active (``qlab accept-case``): it passes when replayed
    on the project as it is now. The collection is built (and the last result read) only when asked."""

    def check(case: Case) -> str | None:
        from qlab.governance.env import collection_and_engines, default_result, project
        from qlab.governance.records import load_artifact

        config = project(str(config_path)).config
        collection, _factory = collection_and_engines(config)
        stored = None
        last = default_result(config)
        if case.mode == "execute" and last.is_file():
            wanted = {case.id, str(case.trace.get("case_id", ""))}
            run = load_artifact(last)
            stored = next(
                (c for c in run.cases if c["case_id"] in wanted and c.get("status") == "passed"), None
            )
        return replays_passing(case, base=base_subject(config, collection), stored=stored)

    return check

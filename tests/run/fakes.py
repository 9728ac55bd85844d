"""Fakes for the runner tests: a small Config built in memory, and stage functions whose outcome each case
spells out in its ``expected_target`` (so every test reads its scenario from the case list):

- ``absent:*``  → search misses (``expected_target_absent``)
- ``second:*``  → search hits at rank 2
- ``wrong:*``   → the selector picks another target (``wrong_target_selected``)
- ``unsat:*``   → the plan needs input (``required_fields_unsatisfied``)
- ``auth:*``    → execute fails ``auth_context_required``
- ``assert:*``  → execute fails ``assertion_failed``
- ``flip:*``    → execute passes every other attempt (for repeats)
- ``planfail:*`` → an execute case that fails at plan inside the execute stage
- ``down:*``     → execute errs with ``dev_server_failed`` (an infrastructure fault)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab.collection.model import Collection, Tool
from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan, SearchResult, Selection
from qlab.governance.learning.suggest import run_learning
from qlab.project.model import (
    Budget,
    Case,
    CollectionConfig,
    Config,
    EngineConfig,
    Environment,
    Gate,
    Guard,
    Origin,
    OutputConfig,
    StopCondition,
    Suite,
    Threshold,
)
from qlab.run import prerun
from qlab.run.options import RunOptions, Seams
from qlab.stages.base import GuardResult, StageReport, StopHit
from qlab.stages.context import RunContext

FAKE_ENV_URL = "http://127.0.0.1:9"
DEFAULT_GATES = (
    Gate("build", "build"),
    Gate(
        "search",
        "search",
        ("search_core",),
        (Threshold("hit_at_k", ">=", 0.9),),
        (StopCondition("expected_target_absent"),),
    ),
    Gate(
        "select",
        "select",
        ("plan_e2e",),
        (Threshold("selector_accuracy", ">=", 0.9),),
        (StopCondition("ambiguous_critical"),),
    ),
    Gate(
        "plan",
        "plan",
        ("plan_e2e",),
        (Threshold("plan_hit_rate", ">=", 0.9),),
        (StopCondition("required_fields_unsatisfied"),),
    ),
    Gate(
        "execute",
        "execute",
        ("execute_read",),
        (Threshold("execute_read_success_rate", ">=", 1.0),),
        (StopCondition("auth_not_ready"),),
    ),
    Gate("learn", "learn", (), (), (StopCondition("scrub_failed"),)),
)


def config(
    tmp: Path,
    *,
    suites: Mapping[str, Suite] | None = None,
    gates: Sequence[Gate] = DEFAULT_GATES,
    budget: Budget | None = None,
) -> Config:
    path = tmp / "qlab.yaml"
    if not path.exists():
        path.write_text("version: 1\n", encoding="utf-8")
    return Config(
        version=1,
        project="fake",
        path=str(path),
        collection=CollectionConfig(sources=()),
        engine=EngineConfig(),
        environments={"dev": Environment("dev", FAKE_ENV_URL, allowed_hosts=("127.0.0.1",))},
        auth_profiles={},
        suites=suites
        or {
            "search_core": Suite("search_core", "search", ("s/*.yaml",), cadence="every_search_change"),
            "plan_e2e": Suite(
                "plan_e2e", "plan", ("p/*.yaml",), cadence="every_plan_change", critical=("p1",)
            ),
            "execute_read": Suite(
                "execute_read", "execute", ("e/*.yaml",), environment="dev", cadence="dev_deployment_smoke"
            ),
        },
        gates=tuple(gates),
        budget=budget or Budget(),
        output=OutputConfig(dir="out"),
        digest="sha256:config",
    )


def case(case_id: str, suite: str, mode: str, target: str = "getThing", *, line: int = 1, **kw: Any) -> Case:
    file = f"{suite}.yaml"
    return Case(
        id=case_id,
        mode=mode,  # type: ignore[arg-type]
        query=f"query {case_id}",
        suite=suite,
        file=file,
        origin=Origin(file, line, 1),
        expected_target=target,
        **kw,
    )


@dataclass(frozen=True)
class FakeProject:
    config: Config
    cases: tuple[Case, ...]
    warnings: tuple[str, ...] = ()
    case_files: tuple[Any, ...] = ()


class FakeEngine:
    name = "fake"

    def search(self, query: str, *, k: int) -> SearchResult:
        return SearchResult(rows=())

    def select(
        self, query: str, result: SearchResult, *, entities: Mapping[str, Any], llm_target: str | None
    ) -> Selection:
        return Selection(llm_target, None, False, ())

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        return Plan("p", "synthesized")


def fake_build(config: Config, gate: Gate) -> tuple[Collection | None, StageReport]:
    return Collection(
        tools=(Tool("getThing", "getThing", "things", "fake", "openapi"),), digest="sha256:coll"
    ), StageReport("build", metrics={"schema_coverage": 0.9})


def _kind(case: Case) -> str:
    return (case.expected_target or "").split(":", 1)[0]


def fake_search(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    for c in cases:
        r = results[c.id]
        kind = _kind(c)
        rank = None if kind == "absent" else 2 if kind == "second" else 1
        r.search = {"hit": rank is not None, "hit_rank": rank, "top_k": 5, "rows": []}
        r.latency_ms["search"] = 10.0 + len(c.id)
        if rank is None:
            r.fail("search", "expected_target_absent", f"{c.expected_target} not in the Top-5")
    return StageReport("search")


def fake_select(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    for c in cases:
        r = results[c.id]
        wrong = _kind(c) == "wrong"
        r.target_selector = {
            "llm_target": None,
            "selected_target": "other" if wrong else c.expected_target,
            "overrode_llm": False,
            "reason_codes": [],
        }
        r.latency_ms["target_selection"] = 2.0
        if wrong:
            r.fail("select", "wrong_target_selected", "selected other")
    return StageReport("select")


def fake_plan(ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]) -> StageReport:
    for c in cases:
        r = results[c.id]
        unsat = _kind(c) == "unsat"
        r.plan = {
            "status": "needs_input" if unsat else "synthesized",
            "tools": [str(c.expected_target)],
            "user_input_slots": [],
        }
        r.latency_ms["plan"] = 5.0
        if unsat:
            r.fail("plan", "required_fields_unsatisfied", "memberNo is required")
    return StageReport("plan")


@dataclass
class FakeExecute:
    calls: list[int] = field(default_factory=list)
    secrets: tuple[str, ...] = ()
    leak: bool = False

    def __call__(
        self, ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]
    ) -> StageReport:
        self.calls.append(len(cases))
        ctx.secrets.update(self.secrets)
        for c in cases:
            r = results[c.id]
            r.mutation_safety = c.mutation_safety
            kind = _kind(c)
            r.execute = {
                "http_status": 200,
                "events": [{"event": "request_sent", "method": "GET", "at": "now"}],
            }
            if self.leak and self.secrets:
                r.execute["echo"] = self.secrets[0]
            r.latency_ms["execute"] = 20.0
            if kind == "down":  # the environment's dev server never started: an infrastructure fault
                r.fail("execute", "dev_server_failed", "environment dev: the server exited", status="error")
            elif kind == "planfail":  # the execute stage plans first: a plan failure is recorded at plan
                r.execute = None
                r.fail("plan", "required_fields_unsatisfied", "memberNo is required")
            elif kind == "auth":
                r.auth_readiness = {"status": "not_ready", "reason_codes": ["auth_context_required"]}
                r.fail("execute", "auth_context_required", "TOKEN not set")
            elif kind == "assert" or (kind == "flip" and len(self.calls) % 2 == 0):
                r.fail("execute", "assertion_failed", "$.data missing")
        return StageReport("execute", guards=[GuardResult("mutation_safety", "execute", True, "block", "ok")])


def _answers(url: str, timeout: float) -> tuple[bool, str]:
    """The fake config's environment answers (the fake execute stage never calls it); anything else is probed."""
    return (True, "HTTP 200") if url == FAKE_ENV_URL else prerun.probe(url, timeout)


def options(tmp: Path, **kw: Any) -> RunOptions:
    stages = {
        "search": fake_search,
        "select": fake_select,
        "plan": fake_plan,
        "execute": kw.pop("execute", FakeExecute()),
    }
    stages.update(kw.pop("stages", {}))
    return RunOptions(
        seams=Seams(
            build=kw.pop("build", fake_build),
            engine=lambda config, collection: FakeEngine(),
            stages=stages,
            # the environment of the fake config is never called (the execute stage is fake too)
            reach=kw.pop("reach", _answers),
        ),
        log_dir=tmp / "out",
        learner=kw.pop("learner", run_learning),  # as `qlab run` gives it
        **kw,
    )


def demo_cases() -> tuple[Case, ...]:
    return (
        case("s1", "search_core", "search", line=1),
        case("s2", "search_core", "search", "second:x", line=5),
        case("p1", "plan_e2e", "plan", line=1),
        case("p2", "plan_e2e", "plan", line=7),
        case("e1", "execute_read", "execute", line=1),
    )


__all__ = ["Guard", "StopHit"]

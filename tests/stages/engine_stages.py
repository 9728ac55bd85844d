"""Shared set-up of the search, select and plan stage tests: a config with one suite per mode, cases built in
memory, the demo collection with its IO contracts, and engines that count or fail on purpose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.helpers import demo_collection
from qlab.collection.model import Collection
from qlab.contracts.results import CaseResult
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.types import Plan, SearchResult, Selection
from qlab.project.model import (
    Assertion,
    Case,
    CollectionConfig,
    Config,
    EngineConfig,
    Gate,
    Origin,
    Suite,
)
from qlab.stages.context import RunContext

DEMO = demo_collection()


def config(tmp: Path, *, critical: tuple[str, ...] = (), k: int = 5) -> Config:
    path = tmp / "qlab.yaml"
    path.write_text("version: 1\n", encoding="utf-8")
    return Config(
        version=1,
        project="engine-stages",
        path=str(path),
        collection=CollectionConfig(sources=()),
        engine=EngineConfig(),
        environments={},
        auth_profiles={},
        suites={
            "search_core": Suite("search_core", "search", ("s/*.yaml",), k=k),
            "plan_e2e": Suite("plan_e2e", "plan", ("p/*.yaml",), critical=critical),
        },
        gates=(),
    )


def case(
    case_id: str,
    query: str,
    target: str | None = None,
    *,
    mode: str = "plan",
    entities: Mapping[str, Any] | None = None,
    llm_target: str | None = None,
    assertions: Sequence[tuple[str, Mapping[str, Any]]] = (),
    plan_tools: tuple[str, ...] = (),
    top_k: int | None = None,
) -> Case:
    return Case(
        id=case_id,
        mode=mode,  # type: ignore[arg-type]
        query=query,
        suite="search_core" if mode == "search" else "plan_e2e",
        file="cases.yaml",
        origin=Origin("cases.yaml", 1, 1),
        expected_target=target,
        expected_top_k=top_k,
        provided_entities=dict(entities or {}),
        llm_target=llm_target,
        assertions=tuple(Assertion(kind, dict(args)) for kind, args in assertions),
        expected_plan_tools=plan_tools,
    )


class Counting:
    """An engine that counts its calls and can be told to fail at one stage or to answer fixed objects."""

    name = "counting"

    def __init__(self, inner: Any, *, fail_at: str | None = None, **fixed: Any) -> None:
        self.inner = inner
        self.fail_at = fail_at
        self.fixed = fixed
        self.calls: list[str] = []

    def _call(self, kind: str, *args: Any, **kw: Any) -> Any:
        self.calls.append(kind)
        if kind == self.fail_at:
            raise RuntimeError(f"{kind} exploded")
        if kind in self.fixed:
            return self.fixed[kind]
        return getattr(self.inner, kind)(*args, **kw)

    def search(self, query: str, *, k: int) -> SearchResult:
        return self._call("search", query, k=k)  # type: ignore[no-any-return]

    def select(
        self, query: str, result: SearchResult, *, entities: Mapping[str, Any], llm_target: str | None
    ) -> Selection:
        return self._call("select", query, result, entities=entities, llm_target=llm_target)  # type: ignore[no-any-return]

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        return self._call("plan", query, target, entities=entities)  # type: ignore[no-any-return]


def context(
    tmp: Path,
    *,
    engine: Any = None,
    collection: Collection = DEMO,
    critical: tuple[str, ...] = (),
    k: int = 5,
) -> RunContext:
    return RunContext(
        config=config(tmp, critical=critical, k=k),
        collection=collection,
        engine=engine if engine is not None else Counting(BuiltinEngine(collection)),
        gate=Gate("g", "search"),
    )


def results_for(cases: Sequence[Case], *, critical: tuple[str, ...] = ()) -> dict[str, CaseResult]:
    return {c.id: CaseResult(c.id, c.suite, c.mode, critical=c.id in critical) for c in cases}

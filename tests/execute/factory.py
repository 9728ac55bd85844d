"""Builders for the execute tests: Tools, Cases, Plans, Environments, a Config and a RunContext, made directly
(the execute stage codes against the contracts, not against the loaders)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from qlab.collection.model import Collection, MutationClass, Parameter, Tool
from qlab.engine.types import Plan, PlanStep, SearchResult, SearchRow, Selection
from qlab.project.model import (
    Assertion,
    AuthProfile,
    Capture,
    Case,
    CleanupStep,
    CollectionConfig,
    Config,
    EngineConfig,
    Environment,
    Gate,
    Guard,
    Origin,
    Suite,
)
from qlab.stages.context import RunContext

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"


def param(
    name: str, location: str = "query", *, required: bool = False, schema: Mapping[str, Any] | None = None
) -> Parameter:
    return Parameter(name, location, required, dict(schema or {"type": "string"}))  # type: ignore[arg-type]


def tool(
    tool_id: str,
    method: str | None = "GET",
    path: str | None = "/x",
    *,
    params: tuple[Parameter, ...] = (),
    body: Mapping[str, Any] | None = None,
    content_type: str | None = None,
    responses: Mapping[str, Mapping[str, Any]] | None = None,
    media: Mapping[str, tuple[str, ...]] | None = None,
    security: tuple[Mapping[str, tuple[str, ...]], ...] = (),
    mutation: MutationClass | None = None,
    kind: str = "openapi",
) -> Tool:
    if mutation is None:
        mutation = MutationClass.READ_ONLY if (method or "GET") in ("GET", "HEAD") else MutationClass.MUTATING
    return Tool(
        id=tool_id,
        name=tool_id,
        family="test",
        source="test",
        kind=kind,  # type: ignore[arg-type]
        method=method,
        path=path,
        parameters=params,
        request_body=body,
        request_content_type=content_type,
        responses=dict(responses or {}),
        response_media=dict(media or {}),
        security=security,
        mutation=mutation,
    )


def a(kind: str, **args: Any) -> Assertion:
    """An assertion; ``in_`` stands for ``in``."""
    if "in_" in args:
        args["in"] = args.pop("in_")
    return Assertion(kind, args)


def case(
    case_id: str = "c1",
    *,
    assertions: tuple[Assertion, ...] = (),
    cleanup: tuple[CleanupStep, ...] = (),
    captures: tuple[Capture, ...] = (),
    mutation_safety: str = "read_only",
    timeout_sec: float = 10.0,
    suite: str = "s",
    follow_redirects: bool | None = None,
    entities: Mapping[str, Any] | None = None,
    query: str = "q",
    expected_target: str | None = None,
) -> Case:
    return Case(
        id=case_id,
        mode="execute",
        query=query,
        suite=suite,
        file="cases.yaml",
        origin=Origin("cases.yaml", 1, 1),
        expected_target=expected_target,
        provided_entities=dict(entities or {}),
        mutation_safety=mutation_safety,  # type: ignore[arg-type]
        cleanup=cleanup,
        captures=captures,
        assertions=assertions,
        timeout_sec=timeout_sec,
        follow_redirects=follow_redirects,
    )


def env(base_url: str, **kw: Any) -> Environment:
    kw.setdefault("name", "dev")
    kw.setdefault("retry_backoff_sec", 0.01)
    return Environment(base_url=base_url, **kw)


def step(tool_id: str, bindings: Mapping[str, Mapping[str, Any]] | None = None, **arguments: Any) -> PlanStep:
    return PlanStep(tool_id, arguments, dict(bindings or {}))


def plan(*steps: PlanStep) -> Plan:
    return Plan("p-" + "-".join(s.tool_id for s in steps), "synthesized", steps)


# ---------------------------------------------------------------------------------------------- the demo spec


def _resolve(node: Any, spec: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target: Any = spec
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            return _resolve(target, spec)
        return {k: _resolve(v, spec) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, spec) for v in node]
    return node


def demo_tools() -> dict[str, Tool]:
    """Tools for every operation of the demo spec, refs resolved (what the collection loader will produce)."""
    spec = yaml.safe_load(DEMO_SPEC.read_text())
    tools: dict[str, Tool] = {}
    for path, item in spec["paths"].items():
        for method, op in item.items():
            op = _resolve(op, spec)
            params = [
                param(p["name"], p["in"], required=p.get("required", False), schema=p.get("schema"))
                for p in op.get("parameters", [])
            ]
            body_schema = None
            content = op.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                body_schema = content["application/json"]["schema"]
                required = set(body_schema.get("required", []))
                params += [
                    param(n, "body", required=n in required, schema=s)
                    for n, s in body_schema.get("properties", {}).items()
                ]
            responses = {
                code: r["content"]["application/json"]["schema"]
                for code, r in op.get("responses", {}).items()
                if "content" in r
            }
            security = tuple({k: tuple(v) for k, v in req.items()} for req in op.get("security", []))
            verb = method.upper()
            mutation = {"GET": MutationClass.READ_ONLY, "DELETE": MutationClass.DESTRUCTIVE}.get(
                verb, MutationClass.MUTATING
            )
            tools[op["operationId"]] = tool(
                op["operationId"],
                verb,
                path,
                params=tuple(params),
                body=body_schema,
                content_type="application/json" if body_schema else None,
                responses=responses,
                security=security,
                mutation=mutation,
            )
    return tools


# ---------------------------------------------------------------------------------------------- a run


class FakeEngine:
    """An engine that plans from a fixed table: query -> Plan (unknown queries find nothing)."""

    name = "fake"

    def __init__(self, plans: Mapping[str, Plan]) -> None:
        self.plans = dict(plans)
        self.calls: list[str] = []

    def search(self, query: str, *, k: int) -> SearchResult:
        self.calls.append(f"search {query}")
        plan_ = self.plans.get(query)
        rows = (SearchRow(plan_.steps[-1].tool_id, 1, 1.0),) if plan_ and plan_.steps else ()
        return SearchResult(rows)

    def select(
        self, query: str, result: SearchResult, *, entities: Mapping[str, Any], llm_target: str | None
    ) -> Selection:
        target = result.rows[0].tool_id if result.rows else None
        return Selection(llm_target, target, False, ("selected_top_rank",) if target else ("no_candidates",))

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        self.calls.append(f"plan {query}")
        return self.plans[query]


def config(
    tmp_path: Path,
    environments: Mapping[str, Environment],
    *,
    suites: Mapping[str, str | None] | None = None,
    auth_profiles: Mapping[str, AuthProfile] | None = None,
    collection_auth: str | None = None,
) -> Config:
    """A Config whose suites (name -> environment) are execute suites."""
    suites = suites if suites is not None else {"s": next(iter(environments), None)}
    return Config(
        version=1,
        project="t",
        path=str(tmp_path / "qlab.yaml"),
        collection=CollectionConfig(sources=(), auth_profile=collection_auth),
        engine=EngineConfig(),
        environments=dict(environments),
        auth_profiles=dict(auth_profiles or {}),
        suites={n: Suite(n, "execute", ("cases/*.yaml",), environment=e) for n, e in suites.items()},
        gates=(),
    )


def context(
    cfg: Config,
    tools: Mapping[str, Tool],
    *,
    engine: Any = None,
    plans: Mapping[str, Plan] | None = None,
    guards: tuple[Guard, ...] = (),
    log: list[str] | None = None,
) -> RunContext:
    lines = log if log is not None else []
    ctx = RunContext(
        config=cfg,
        collection=Collection(tuple(tools.values())),
        engine=engine or FakeEngine({}),
        gate=Gate("execute", "execute", tuple(cfg.suites), guards=guards),
        log=lines.append,
        log_dir=Path(cfg.path).parent / "logs",
    )
    ctx.answers.plans.update(plans or {})
    return ctx

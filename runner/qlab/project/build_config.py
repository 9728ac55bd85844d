"""Schema-valid qlab.yaml data -> the frozen :class:`~qlab.project.model.Config`.

Runs only after ``schemas.validate`` found nothing, so it trusts the shape: no checks here, only mapping of
the written forms (``hit_at_k: ">= 0.95"``, ``schema_coverage_below: 0.8``, ``mcp: {command: ...}``) onto the
model's dataclasses, each with the origin it was written at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, cast

from qlab.adapters.scrub import IDENTITY_FIELDS
from qlab.project.document import JsonPath
from qlab.project.model import (
    AuthProfile,
    Budget,
    CollectionConfig,
    Config,
    EngineConfig,
    Environment,
    Gate,
    Guard,
    LearningConfig,
    Limits,
    LLMConfig,
    Origin,
    OutputConfig,
    PromotionRule,
    ReleaseSkill,
    ServerConfig,
    Source,
    StopCondition,
    Suite,
    Threshold,
)

OriginOf = Callable[[JsonPath], Origin]
THRESHOLD = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))\s*$")
SOURCE_KINDS = ("openapi", "swagger", "mcp", "python")


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(str(v) for v in value)


def _pick(data: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The keys of ``data`` among ``names`` (a dataclass's optional fields), as written."""
    return {name: data[name] for name in names if name in data}


def parse_threshold(metric: str, text: str, origin: Origin) -> Threshold:
    """``hit_at_k``, ``">= 0.95"`` -> Threshold(hit_at_k, >=, 0.95). The schema guarantees the format."""
    match = THRESHOLD.match(text)
    if match is None:  # unreachable after the schema pass; kept so a bad call is loud, not silent
        raise ValueError(f"not a threshold: {text!r}")
    op = cast(Any, match.group(1))
    return Threshold(metric, op, float(match.group(2)), origin)


def _thresholds(value: Any, path: JsonPath, origin: OriginOf) -> tuple[Threshold, ...]:
    if isinstance(value, list):
        return tuple(
            Threshold(item["metric"], item["op"], float(item["value"]), origin((*path, i)))
            for i, item in enumerate(value)
        )
    out = []
    for metric, spec in (value or {}).items():
        where = origin((*path, metric))
        if isinstance(spec, str):
            out.append(parse_threshold(metric, spec, where))
        else:
            out.append(Threshold(metric, spec["op"], float(spec["value"]), where))
    return tuple(out)


def _stop(item: Any, where: Origin) -> StopCondition:
    if isinstance(item, str):
        return StopCondition(item, None, where)
    ((name, value),) = item.items()
    return StopCondition(str(name), float(value), where)


def _source(
    data: Mapping[str, Any], index: int, origin: OriginOf, kinds_seen: dict[str, int], limits: Limits
) -> Source:
    kind = next(k for k in SOURCE_KINDS if k in data)
    spec = data[kind]
    name = data.get("name") or (kind if kinds_seen.get(kind, 0) <= 1 else f"{kind}-{index + 1}")
    where = origin(("collection", "sources", index))
    reading: dict[str, Any] = {
        "origin": where,
        "remote_refs": bool(data.get("remote_refs", False)),
        "headers_env": dict(data.get("headers_env") or {}),
        "limits": limits,
    }
    if kind == "mcp" and isinstance(spec, dict):
        return Source(
            name,
            "mcp",
            spec.get("tools_file"),
            command=spec.get("command"),
            args=_strings(spec.get("args")),
            env=dict(spec.get("env", {})),
            **reading,
        )
    return Source(name, kind, str(spec), **reading)  # type: ignore[arg-type]


def _collection(data: Mapping[str, Any], origin: OriginOf, limits: Limits) -> CollectionConfig:
    sources = data.get("sources", [])
    kinds_seen: dict[str, int] = {}
    for item in sources:
        kind = next(k for k in SOURCE_KINDS if k in item)
        kinds_seen[kind] = kinds_seen.get(kind, 0) + 1
    return CollectionConfig(
        sources=tuple(_source(item, i, origin, kinds_seen, limits) for i, item in enumerate(sources)),
        aliases_file=data.get("aliases"),
        auth_profile=data.get("auth"),
        **_pick(data, "cache_dir"),
    )


def _auth(name: str, data: Mapping[str, Any], where: Origin) -> AuthProfile:
    fields = _pick(data, "security_scheme", "token_env", "token_command", "header", "query", "value_env",
                   "username_env", "password_env", "token_url", "client_id_env", "client_secret_env")  # fmt: skip
    return AuthProfile(
        name, data["type"], scopes=_strings(data.get("scopes")), headers=dict(data.get("headers", {})), origin=where,
        **fields,
    )  # fmt: skip


def _engine(data: Mapping[str, Any], limits: Limits) -> EngineConfig:
    llm = data.get("llm")
    return EngineConfig(
        **_pick(data, "type", "url", "object", "timeout_sec"),
        headers=dict(data.get("headers", {})),
        llm=None if llm is None else LLMConfig(**llm),
        limits=limits,
    )


def _environment(name: str, data: Mapping[str, Any], where: Origin) -> Environment:
    server = data.get("server")
    return Environment(
        name,
        data["base_url"],
        allowed_hosts=_strings(data.get("allowed_hosts")),
        server=None if server is None else ServerConfig(**{**server, "env": dict(server.get("env", {}))}),
        sensitive_fields=_strings(data.get("sensitive_fields")),
        headers=dict(data.get("headers", {})),
        origin=where,
        **_pick(data, "auth", "concurrency", "retries", "retry_backoff_sec", "follow_redirects"),
    )


def _suite(name: str, data: Mapping[str, Any], where: Origin) -> Suite:
    return Suite(
        name,
        data["mode"],
        _strings(data["cases"]),
        critical=_strings(data.get("critical")),
        origin=where,
        **_pick(
            data,
            "category",
            "cadence",
            "required",
            "must_pass",
            "environment",
            "k",
            "repeat",
            "min_pass",
            "description",
            "target_type",
            "target_ref",
            "created_at",
        ),
    )


def _gate(data: Mapping[str, Any], index: int, origin: OriginOf) -> Gate:
    path: JsonPath = ("gates", index)
    return Gate(
        name=data.get("name") or data["stage"],
        stage=data["stage"],
        suites=_strings(data.get("suites")),
        thresholds=_thresholds(data.get("thresholds"), (*path, "thresholds"), origin),
        stop_if=tuple(
            _stop(item, origin((*path, "stop_if", i))) for i, item in enumerate(data.get("stop_if", []))
        ),
        guards=tuple(Guard(g["name"], g.get("mode", "block")) for g in data.get("guards", [])),
        origin=origin(path),
        **_pick(data, "max_failures", "include_manual"),
    )


def _rule(name: str, data: Mapping[str, Any], where: Origin) -> PromotionRule:
    optional: dict[str, Any] = _pick(data, "tolerance", "bootstrap")
    if "same" in data:
        optional["same"] = _strings(data["same"])
    return PromotionRule(
        name,
        suites=_strings(data.get("suites")),
        require=_strings(data.get("require")),
        metrics=_strings(data.get("metrics")),
        origin=where,
        **optional,
    )


def _skill(name: str, data: Mapping[str, Any], where: Origin) -> ReleaseSkill:
    optional = _pick(data, "trigger_cases", "golden_cases", "trigger_precision_min", "trigger_recall_min",
                     "functional_pass_min", "max_tool_calls", "max_cost_usd", "max_latency_ms", "regression_suite",
                     "record_file", "approvals_file")  # fmt: skip
    triggers = data.get("triggers") or {}
    optional["trigger_phrases"] = _strings(triggers.get("phrases"))
    optional["step_types"] = _strings(triggers.get("step_types"))
    return ReleaseSkill(name, permissions=_strings(data.get("permissions")), origin=where, **optional)


def sensitive_fields(output: OutputConfig, environments: Iterable[Environment]) -> tuple[str, ...]:
    """The fields scrubbed from every output of a run: the identity fields (unless ``output.identity_fields:
    kept``) and every field an environment names in ``sensitive_fields`` (a field sensitive for one environment
    is sensitive in every case and every output, whatever environment the case runs in, if any)."""
    fields = list(IDENTITY_FIELDS) if output.identity_fields == "sensitive" else []
    for env in environments:
        fields += env.sensitive_fields
    return tuple(dict.fromkeys(fields))


def build_config(
    data: Mapping[str, Any], *, path: str, digest: str, origin: OriginOf, shard_digest: str = ""
) -> Config:
    """The Config of schema-valid ``data``; ``path`` is the absolute path of qlab.yaml."""

    def named(key: str, make: Callable[[str, Mapping[str, Any], Origin], Any]) -> dict[str, Any]:
        return {name: make(name, item, origin((key, name))) for name, item in (data.get(key) or {}).items()}

    output = OutputConfig(**(data.get("output") or {}))
    environments: dict[str, Environment] = named("environments", _environment)
    sensitive = sensitive_fields(output, environments.values())
    limits = Limits(**(data.get("limits") or {}))
    return Config(
        version=int(data["version"]),
        project=str(data["project"]),
        path=path,
        collection=_collection(data["collection"], origin, limits),
        engine=_engine(data.get("engine") or {}, limits),
        environments={name: replace(env, sensitive_fields=sensitive) for name, env in environments.items()},
        auth_profiles=named("auth_profiles", _auth),
        suites=named("suites", _suite),
        gates=tuple(_gate(item, i, origin) for i, item in enumerate(data["gates"])),
        promotion=named("promotion", _rule),
        release=named("release", _skill),
        learning=LearningConfig(**(data.get("learning") or {})),
        budget=Budget(**(data.get("budget") or {})),
        output=output,
        sensitive_fields=sensitive,
        limits=limits,
        digest=digest,
        shard_digest=shard_digest or digest,
        target_version=data.get("target_version"),
    )

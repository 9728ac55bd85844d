"""Pre-run checks ("Pre-run: static validation before run creation"): before any case runs, the
config is valid, the sources resolve, and the dependencies answer — the engine service, the LLM endpoint, the
environments the execute cases will call — so a run never burns its budget on a dead dependency; and the execute
suites' auth can be resolved, and the release skills' permissions and tools are bound to the collection.

Each check is a GuardResult with ``stage="pre-run"``. A failed ``block`` check means the run cannot be judged:
verdict ERROR (exit 2), no case runs; an unreachable dependency carries its reason code (``engine_unreachable``,
``llm_unreachable``, ``environment_unreachable``). Auth readiness is ``warn``: the execute stage's own preflight
records a structured reason per case (``auth_context_required``, …) and the gate decides. Messages name env vars,
files and URLs, never a secret value.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection import skill_bindings
from qlab.collection.model import Collection
from qlab.project.model import Case, Config, Source
from qlab.stages.base import GuardResult

PRE_RUN = "pre-run"
PROBE_TIMEOUT_SEC = 5.0
# url, timeout -> (answered, what happened: "HTTP 405" or the transport error)
Probe = Callable[[str, float], "tuple[bool, str]"]


def probe(url: str, timeout: float) -> tuple[bool, str]:
    """GET ``url``: answered with any status (a POST-only endpoint still proves it listens; the body is not
    read), or the transport error (DNS failure, connection refused, timeout)."""
    from qlab.adapters import http  # httpx only when there is something to reach

    try:
        with http.make_client(timeout=timeout) as client:
            status = http.status_of(client, url)
    except http.HTTPError as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, f"HTTP {status}"


def _where(source: Source, index: int) -> str:
    origin = source.origin
    at = f"{origin.file}:{origin.line}:{origin.col}: " if origin.line > 0 else ""
    return f"{at}$.collection.sources[{index}]"


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def _source_problem(source: Source, base: Path) -> str | None:
    if source.kind in ("openapi", "swagger") or (source.kind == "mcp" and source.location):
        location = source.location or ""
        if _is_url(location):
            return None  # fetched (and reported with its location) by the build stage
        path = base / location
        return None if path.is_file() else f"file not found: {path}"
    if source.kind == "mcp":
        command = source.command or ""
        return (
            None
            if command and shutil.which(command)
            else f"MCP server command not found on PATH: {command!r}"
        )
    # found as the build imports it: qlab.yaml's folder first on sys.path (imported here: only a python source
    # needs the module)
    from qlab.collection.python_source import module_problem

    return module_problem(source.location or "", base_dir=base)


def _knowledge_problem(config: Config, base: Path) -> str | None:
    """The project knowledge file reads (a missing one is fine: nothing learned yet)."""
    from qlab.contracts.errors import QlabError
    from qlab.engine.knowledge import load_knowledge

    try:
        load_knowledge(config.learning.knowledge_file, base_dir=base)
    except QlabError as exc:
        return f"$.learning.knowledge_file: {exc}"
    return None


def check_config(config: Config, warnings: Sequence[str]) -> GuardResult:
    """The config passed schema and semantic validation (``load_project`` raised otherwise)."""
    note = f"; {len(warnings)} warning(s)" if warnings else ""
    return GuardResult("config_valid", PRE_RUN, True, "block", f"{Path(config.path).name} is valid{note}")


def check_sources(config: Config) -> GuardResult:
    """Every collection source (and the aliases file) can be found before the build starts."""
    base = Path(config.path).parent
    problems = []
    for index, source in enumerate(config.collection.sources):
        problem = _source_problem(source, base)
        if problem:
            problems.append(f"{_where(source, index)}: {problem}")
    aliases = config.collection.aliases_file
    if aliases and not (base / aliases).is_file():
        problems.append(f"$.collection.aliases: file not found: {base / aliases}")
    problem = _knowledge_problem(config, base)
    if problem:
        problems.append(problem)
    if problems:
        return GuardResult("sources_resolvable", PRE_RUN, False, "block", "; ".join(problems))
    return GuardResult(
        "sources_resolvable", PRE_RUN, True, "block", f"{len(config.collection.sources)} source(s) resolvable"
    )


def _auth_problem(config: Config, env_name: str | None) -> str | None:
    environment = config.environments.get(env_name or "")
    if environment is None:
        return f"environment {env_name!r} is not defined (environment_missing)"
    profile_name = environment.auth or config.collection.auth_profile
    if profile_name is None:
        return None  # the collection needs no auth
    profile = config.auth_profiles.get(profile_name)
    if profile is None:
        return f"auth profile {profile_name!r} is not defined (auth_profile_missing)"
    missing = [name for name in profile.env_names() if not os.environ.get(name)]
    if profile.token_command and not missing:
        program = (shlex.split(profile.token_command) or [""])[0]
        if not shutil.which(program):
            return f"profile {profile_name!r}: token command {program!r} not found (auth_header_resolution_failed)"
        # here, not at the top: the auth module loads the HTTP client, which a run without execute never needs
        from qlab.execute.auth import unset_in_command

        unset = unset_in_command(profile.token_command, os.environ)
        if unset:
            return (
                f"profile {profile_name!r}: its token command reads {', '.join(unset)}, not set "
                "(auth_header_resolution_failed)"
            )
        return None
    if missing:
        return f"profile {profile_name!r}: {', '.join(missing)} not set (auth_context_required)"
    return None


def check_auth(config: Config, cases: Iterable[Case]) -> list[GuardResult]:
    """Auth readiness of every environment the selected execute cases use (warn: see the module docstring)."""
    envs = dict.fromkeys(config.suites[c.suite].environment for c in cases if c.mode == "execute")
    out = []
    for env_name in envs:
        problem = _auth_problem(config, env_name)
        label = env_name or "<none>"
        out.append(
            GuardResult(
                "auth_readiness",
                PRE_RUN,
                problem is None,
                "warn",
                f"environment {label}: {problem}"
                if problem
                else f"environment {label}: auth can be resolved",
                subject=label,
            )
        )
    return out


def check_skill_bindings(config: Config, collection: Collection) -> list[GuardResult]:
    """The release skills' bindings on the collection this run built (``qlab.collection.skill_bindings``): a
    permission or golden-case tool it does not declare. ``block``: the same typo is exit 2 in ``qlab validate``
    and ``qlab release``, and a run that judged the cases under a policy naming nothing would be judged again."""
    if not config.release:
        return []
    found = skill_bindings.check(config, collection)
    if not found:
        return [
            GuardResult("skill_bindings", PRE_RUN, True, "block", f"{len(config.release)} skill(s) bound")
        ]
    shown = "; ".join(d.render() for d in found[:3]) + (
        f" (+{len(found) - 3} more)" if len(found) > 3 else ""
    )
    return [GuardResult("skill_bindings", PRE_RUN, False, "block", shown, "skill_binding_unknown")]


def check_skill_status(config: Config, cases: Iterable[Case]) -> list[GuardResult]:
    """The status of each skill the run's suites evaluate (``target_type: skill``, ``target_ref`` its name, with
    an ``@version`` or not): a skill ``release:`` declares, its status read from its record file (``draft`` until
    its five release gates publish it). A target ``release:`` does not declare fails the check (``warn``: the
    cases are judged all the same, but no release of that name can use this run), with Did you mean."""
    targets: dict[str, list[str]] = {}
    for suite in dict.fromkeys(c.suite for c in cases):
        info = config.suites[suite]
        if info.target_type == "skill" and info.target_ref:
            targets.setdefault(info.target_ref.split("@", 1)[0], []).append(suite)
    out = []
    for name, suites in targets.items():
        where = f"suite(s) {', '.join(suites)}"
        skill = config.release.get(name)
        if skill is None:
            hint = (
                did_you_mean(name, list(config.release)) if config.release else " release: declares no skill."
            )
            message = f"{where} evaluate skill {name!r}, which release: does not declare.{hint}"
            out.append(
                GuardResult("skill_status", PRE_RUN, False, "warn", message, "skill_binding_unknown", name)
            )
            continue
        status = _skill_status(Path(config.path).parent / skill.record_file, name)
        out.append(
            GuardResult("skill_status", PRE_RUN, True, "warn", f"{name}: {status} ({where})", subject=name)
        )
    return out


def _skill_status(record: Path, name: str) -> str:
    """The skill's status in its release record (draft when it has none yet)."""
    try:
        data = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    except (OSError, ValueError):
        return f"unknown (the release record {record.name} does not read)"
    entry = (data.get("skills") or {}).get(name) if isinstance(data, dict) else None
    return str(entry.get("status", "draft")) if isinstance(entry, dict) else "draft"


def check_engine(config: Config, engine_name: str, *, reach: Probe = probe) -> GuardResult:
    """The engine answers: built in and python engines are ready once made; an http engine's URL must take a
    connection (any HTTP status counts: the endpoints are POST-only, a GET only proves it listens)."""
    url = config.engine.url if config.engine.type == "http" else None
    if not url:
        return GuardResult("engine_reachable", PRE_RUN, True, "block", f"engine {engine_name} ready")
    answered, detail = reach(url, min(config.engine.timeout_sec, 10.0))
    if not answered:
        message = f"engine {url} does not answer: {detail.split(':', 1)[0]}; is the service running?"
        return GuardResult("engine_reachable", PRE_RUN, False, "block", message, "engine_unreachable")
    return GuardResult("engine_reachable", PRE_RUN, True, "block", f"engine {url} answers ({detail})")


def check_llm(config: Config, cases: Iterable[Case], *, reach: Probe = probe) -> list[GuardResult]:
    """The LLM endpoint answers, when the built-in engine will ask it (a plan or execute case without a recorded
    ``llm_target``). With answers already in its cache the check only warns: the run may not need the endpoint."""
    llm = config.engine.llm
    if config.engine.type != "builtin" or llm is None:
        return []
    if not any(c.mode != "search" and c.llm_target is None for c in cases):
        return []
    cache = Path(llm.cache_dir)
    cache = cache if cache.is_absolute() else Path(config.path).parent / cache
    cached = cache.is_dir() and any(cache.iterdir())
    mode = "warn" if cached else "block"
    answered, detail = reach(llm.base_url, min(llm.timeout_sec, PROBE_TIMEOUT_SEC))
    if not answered:
        note = "; answers in its cache may do" if cached else ""
        message = f"LLM endpoint {llm.base_url} does not answer: {detail.split(':', 1)[0]}{note}"
        return [GuardResult("llm_reachable", PRE_RUN, False, mode, message, "llm_unreachable")]
    return [
        GuardResult("llm_reachable", PRE_RUN, True, mode, f"LLM endpoint {llm.base_url} answers ({detail})")
    ]


def check_environments(
    config: Config, cases: Iterable[Case], *, start_servers: bool, reach: Probe = probe
) -> list[GuardResult]:
    """Every environment the selected execute cases of required suites call takes a connection at its
    ``base_url`` (DNS, connection refused). An environment whose dev server qlab starts is checked when it
    starts (``dev_server_failed``)."""
    names = dict.fromkeys(
        config.suites[c.suite].environment
        for c in cases
        if c.mode == "execute" and config.suites[c.suite].required and not c.flaky
    )
    out = []
    for name in names:
        env = config.environments.get(name or "")
        if env is None or (env.server is not None and start_servers):
            continue
        answered, detail = reach(env.base_url, PROBE_TIMEOUT_SEC)
        if not answered:
            message = f"environment {name}: {env.base_url} does not answer: {detail}"
            out.append(
                GuardResult(
                    "environment_reachable",
                    PRE_RUN,
                    False,
                    "block",
                    message,
                    "environment_unreachable",
                    subject=str(name),
                )
            )
        else:
            out.append(
                GuardResult(
                    "environment_reachable",
                    PRE_RUN,
                    True,
                    "block",
                    f"environment {name}: {env.base_url} answers ({detail})",
                    subject=str(name),
                )
            )
    return out

"""Pre-run checks (seed 003 "Pre-run: static validation before run creation"): before any case runs, the
config is valid, the sources resolve, the engine answers, and the execute suites' auth can be resolved.

Each check is a GuardResult with ``stage="pre-run"``. A failed ``block`` check means the run cannot be judged
(exit 2, no case runs). Auth readiness is ``warn``: the execute stage's own preflight records a structured
reason per case (``auth_context_required``, …) and the execute gate's ``stop_if: auth_not_ready`` decides.
Messages name env vars and files, never a value.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from qlab.project.model import Case, Config, Source
from qlab.stages.base import GuardResult

PRE_RUN = "pre-run"


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
    module = (source.location or "").split(":", 1)[0]
    try:
        found = importlib.util.find_spec(module) is not None if module else False
    except (ImportError, ValueError):
        found = False
    return (
        None if found else f"Python module {module!r} cannot be imported (is it installed, or on PYTHONPATH?)"
    )


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
            )
        )
    return out


def check_engine(config: Config, engine_name: str) -> GuardResult:
    """The engine answers: built in and python engines are ready once made; an http engine's URL must take a
    connection (any HTTP status counts: the endpoints are POST-only, a GET only proves it listens)."""
    url = config.engine.url if config.engine.type == "http" else None
    if not url:
        return GuardResult("engine_reachable", PRE_RUN, True, "block", f"engine {engine_name} ready")
    from qlab import http  # httpx only when an http engine is configured

    try:
        with http.make_client(timeout=min(config.engine.timeout_sec, 10.0)) as client:
            status = client.get(url).status_code
    except http.HTTPError as exc:
        message = f"engine {url} does not answer: {type(exc).__name__}; is the service running?"
        return GuardResult("engine_reachable", PRE_RUN, False, "block", message)
    return GuardResult("engine_reachable", PRE_RUN, True, "block", f"engine {url} answers (HTTP {status})")

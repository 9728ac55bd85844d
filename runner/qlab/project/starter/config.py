"""The starter's qlab.yaml: the pinned spec, an environment from its servers, an auth profile per security
scheme, the search and execute suites, and gates whose thresholds are the figures a first run measured.

The file is data written by the YAML emitter with comments beside it (``qlab.project.annotated``); every
string that comes from the spec is written with :func:`~qlab.project.interpolate.literal`, so ``${VAR}``
interpolation gives it back as it was and never reads a variable. The one interpolation the file makes is
its own: the environment's ``base_url: ${PREFIX_BASE_URL:-default}``, whose default is a URL that can carry
no ``$``, ``{`` or ``}`` (``model.clean_url``).

Thresholds come computed (``Figures.thresholds``, by ``qlab.run.thresholds``); each is written with a comment
saying what was measured. Without figures (the measuring run itself) the gates have no thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts.reasons import AUTH_FAILURES, AUTH_PREFLIGHT
from qlab.project.annotated import Annotated, commented_out, render
from qlab.project.interpolate import literal
from qlab.project.starter.auth import Profile
from qlab.project.starter.cases import ALIASES_FILE
from qlab.project.starter.model import Figures, Starter, Threshold

SEARCH_SUITE = "search_core"
READS_SUITE = "execute_read"
ENVIRONMENT = "api"
AUTH_REASONS = AUTH_PREFLIGHT  # auth not ready: no request was sent
FILE = "qlab.yaml"


def _literal(value: Any) -> Any:
    """Every string of ``value`` as :func:`literal` writes it (keys are never interpolated)."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, dict):
        return {key: _literal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_literal(item) for item in value]
    return value


def threshold_note(threshold: Threshold) -> str:
    """``measured 0.888889 at init; raise me`` (``keep it`` at the best figure), and the threshold's own note."""
    value = threshold.measured
    shown = f"{value:.6f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.1f}"
    said = f"measured {shown} at init; {'keep it' if value >= 1.0 else 'raise me'}"
    return f"{said}. {threshold.note}" if threshold.note else said


class _File:
    """qlab.yaml's data, and its comments by JSON path, as the sections add them."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.above: dict[tuple[str | int, ...], list[str]] = {}
        self.beside: dict[tuple[str | int, ...], str] = {}
        self.below: dict[tuple[str | int, ...], list[str]] = {}


def _collection(out: _File, starter: Starter, auth: Profile | None) -> None:
    source: dict[str, Any] = {"name": "api", starter.kind: literal(starter.source)}
    section: dict[str, Any] = {"sources": [source], "aliases": ALIASES_FILE}
    if starter.source_note:
        out.beside[("collection", "sources", 0, starter.kind)] = starter.source_note
    if starter.remote_refs:
        source["remote_refs"] = True
        out.beside[("collection", "sources", 0, "remote_refs")] = (
            "its $refs read other documents by URL (init --allow-remote-refs)"
        )
    if starter.headers_env:
        source["headers_env"] = {literal(name): literal(var) for name, var in starter.headers_env.items()}
        out.beside[("collection", "sources", 0, "headers_env")] = (
            "the fetch's headers: each value is read from this environment variable"
        )
    if auth is not None:
        section["auth"] = auth.name
        out.beside[("collection", "auth")] = "the scheme most operations require"
    out.data["collection"] = section


def _profiles(out: _File, starter: Starter, profiles: Sequence[Profile]) -> None:
    if profiles:
        out.data["auth_profiles"] = {p.name: _literal(p.keys) for p in profiles}
        out.above[("auth_profiles",)] = [
            "One per security scheme of the spec; an operation's `security` picks the ones its requests send.",
            "Each names the environment variable that holds the secret, never the secret.",
        ]
        for profile in profiles:
            out.beside[("auth_profiles", profile.name)] = profile.scheme.detail
            if profile.scheme.where == "cookie":
                out.beside[("auth_profiles", profile.name, "headers")] = (
                    f"{profile.env[0]} holds `{profile.scheme.key}=<value>`"
                )
    unsupported = [
        f"scheme {s.name!r} ({s.detail}): no profile type fits; write a `headers` profile"
        for s in starter.schemes
        if s.kind == "unsupported"
    ]
    if unsupported:
        out.above[("environments",)] = unsupported


def _environment(out: _File, starter: Starter, auth: Profile | None) -> None:
    variable = f"{starter.env_prefix}_BASE_URL"
    if starter.base_url:
        why = f"the spec's server; set {variable} to test another deployment (a dev server, staging)"
        default = starter.base_url
    else:
        why = f"the spec names no server: set {variable} (or run `qlab init` with --base-url)"
        default = "http://127.0.0.1"
    environment: dict[str, Any] = {"base_url": f"${{{variable}:-{default}}}"}
    if auth is not None:
        environment["auth"] = auth.name
    out.data["environments"] = {ENVIRONMENT: environment}
    out.above[("environments", ENVIRONMENT, "base_url")] = [why]


def _suites(reads: bool, k: int) -> dict[str, Any]:
    suites: dict[str, Any] = {
        SEARCH_SUITE: {"mode": "search", "cases": [f"gates/{SEARCH_SUITE}/*.yaml"], "category": "flow",
                       "cadence": "every_search_change", "k": k},
    }  # fmt: skip
    if reads:
        suites[READS_SUITE] = {"mode": "execute", "cases": [f"gates/{READS_SUITE}/*.yaml"], "category": "step",
                               "cadence": "dev_deployment_smoke", "environment": ENVIRONMENT}  # fmt: skip
    return suites


def _with_thresholds(out: _File, index: int, gate: dict[str, Any], rows: Sequence[Threshold]) -> None:
    if rows:
        gate["thresholds"] = {t.metric: f">= {t.value}" for t in rows}
        for t in rows:
            out.beside[("gates", index, "thresholds", t.metric)] = threshold_note(t)


def _gates(out: _File, figures: Figures | None, *, reads: bool, gated: bool, note: str) -> None:
    thresholds: Mapping[str, tuple[Threshold, ...]] = figures.thresholds if figures is not None else {}
    build: dict[str, Any] = {"name": "build", "stage": "build"}
    search: dict[str, Any] = {"name": "search", "stage": "search", "suites": [SEARCH_SUITE]}
    out.data["gates"] = [build, search]
    for coverage in thresholds.get("build", ()):
        build["stop_if"] = [{"schema_coverage_below": float(coverage.value)}]
        out.beside[("gates", 0, "stop_if", 0)] = threshold_note(coverage)
    _with_thresholds(out, 1, search, thresholds.get("search", ()))
    if not reads:
        return
    execute: dict[str, Any] = {"name": "execute", "stage": "execute", "suites": [READS_SUITE]}
    measured = figures.execute if figures is not None else None
    if gated and (figures is None or measured is not None):
        out.data["gates"].append(execute)
        rows = thresholds.get("execute", ())
        if figures is not None:
            _with_thresholds(out, 2, execute, rows)
            # what fires auth_not_ready (preflight, or 401/403): a stop the first run on this spec would hit
            auth_failed = measured is not None and any(r in AUTH_FAILURES for r in measured.reasons)
            execute["stop_if"] = ["mutation_unsafe"] if auth_failed else ["auth_not_ready", "mutation_unsafe"]
        return
    # not gated: the gate is written commented out, after the reason and how to turn it on
    execute["thresholds"] = {"execute_read_success_rate": ">= 1.0"}
    execute["stop_if"] = ["auth_not_ready", "mutation_unsafe"]
    out.below[("gates", 1)] = [*note.splitlines(), *commented_out([execute])]


def _promotion(reads: bool) -> dict[str, Any]:
    promotion: dict[str, Any] = {
        "alias_or_semantic_metadata": {"suites": [SEARCH_SUITE],
                                       "require": ["metric_not_worse", "no_required_regression"],
                                       "metrics": ["hit_at_k", "top_1", "mrr"]},
    }  # fmt: skip
    if reads:
        promotion["execute_enablement"] = {"suites": [READS_SUITE],
                                           "require": ["auth_ready", "read_assertions_pass"]}  # fmt: skip
    return promotion


def config_file(
    starter: Starter,
    *,
    profiles: Sequence[Profile],
    auth: Profile | None,
    reads: bool,
    figures: Figures | None,
    execute_gated: bool,
    execute_note: str = "",
) -> Annotated:
    """qlab.yaml of the starter, as data and comments. ``figures`` None: the measuring run's version."""
    about = f" ({starter.title})" if starter.title else ""
    header = [
        "yaml-language-server: $schema=schemas/qlab.schema.json",
        f"Created by `qlab init --from-openapi {starter.spec_label}`{about}.",
    ]
    if figures is not None:
        header += [
            "The thresholds are this spec's own figures, measured by running the gates once when the file was",
            "written and rounded down: `qlab run` passes on the unchanged spec and blocks on any regression.",
            "Raise them as the spec, the aliases and the cases get better. Guide: docs/your-api.md.",
        ]
    out = _File()
    out.data = {"version": 1, "project": literal(starter.project)}
    _collection(out, starter, auth)
    _profiles(out, starter, profiles)
    _environment(out, starter, auth)
    out.data["suites"] = _suites(reads, figures.k if figures is not None else 5)
    _gates(out, figures, reads=reads, gated=execute_gated, note=execute_note)
    if figures is not None:  # the measuring run learns nothing: its signals would be init's, not a user's
        out.data["gates"].append({"name": "learn", "stage": "learn", "stop_if": ["scrub_failed"]})
        out.above[("gates", len(out.data["gates"]) - 1)] = [
            "every run that decides (a blocked one too) leaves its misses as proposals in .qlab/suggestions.json:",
            "`qlab learn list`, `qlab learn sandbox`, `qlab learn accept ID --by NAME` (docs/your-api.md, section 9)",
        ]
    out.data["promotion"] = _promotion(reads)
    out.above[("promotion", "alias_or_semantic_metadata")] = [
        "`qlab promote --baseline main.json --candidate pr.json --change alias_or_semantic_metadata`"
    ]
    return Annotated(out.data, header=header, above=out.above, beside=out.beside, below=out.below)


def config_text(starter: Starter, **options: Any) -> str:
    """qlab.yaml of the starter as text (see :func:`config_file`)."""
    return render(config_file(starter, **options), file=FILE)

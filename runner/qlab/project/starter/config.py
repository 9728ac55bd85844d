"""The starter's qlab.yaml: the pinned spec, an environment from its servers, an auth profile per security
scheme, the search and execute suites, and gates whose thresholds are the figures a first run measured.

Thresholds are the measured figures **rounded down** at a precision finer than one case (``places_for``):
the first ``qlab run`` on the unchanged spec passes, and a single case lost blocks. Each carries a comment
with the measured value ("raise me" while it is below the best possible). Without figures (the measuring run
itself) the gates have no thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal

from qlab.project.starter.auth import Profile
from qlab.project.starter.cases import ALIASES_FILE, scalar
from qlab.project.starter.model import Figures, Measured, Starter

SEARCH_SUITE = "search_core"
READS_SUITE = "execute_read"
ENVIRONMENT = "api"
MOST_PLACES = 6  # qlab rounds rates to 6 decimals; a finer threshold could sit above the rounded figure
COVERAGE_PLACES = 4  # the build stage reports schema_coverage to 4 decimals
AUTH_REASONS = frozenset({"auth_context_required", "auth_profile_missing", "auth_header_resolution_failed"})
# at most (1/r - 1/(r+1)) / n for a case moving from rank r to r + 1 within the top K: 1 / (K (K + 1) n)
_RANK_STEPS = 30


def places_for(cases: int, *, spread: int = 1) -> int:
    """Decimal places at which one case out of ``cases`` (a ``1/spread`` share of one) moves the figure."""
    return max(2, min(MOST_PLACES, math.ceil(math.log10(max(cases * spread, 1)))))


def floor_text(value: float, places: int) -> str:
    """``value`` rounded down to ``places`` decimals, as short as it goes: 0.947368 → ``0.94`` (2), 1 → ``1.0``."""
    step = Decimal(1).scaleb(-places)
    text = format(Decimal(repr(float(value))).quantize(step, rounding=ROUND_FLOOR).normalize(), "f")
    return text if "." in text else f"{text}.0"


def _comment(value: float, best: float = 1.0) -> str:
    measured = f"{value:.6f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.1f}"
    return (
        f"measured {measured} at init; keep it" if value >= best else f"measured {measured} at init; raise me"
    )


def _threshold(metric: str, value: float | None, places: int) -> list[str]:
    if value is None:
        return []
    return [f'      {metric}: ">= {floor_text(value, places)}"  # {_comment(value)}\n']


def _head(starter: Starter, figures: Figures | None) -> list[str]:
    about = f" ({starter.title})" if starter.title else ""
    lines = [
        "# yaml-language-server: $schema=schemas/qlab.schema.json\n",
        f"# Created by `qlab init --from-openapi {starter.spec_label}`{about}.\n",
    ]
    if figures is not None:
        lines += [
            "# The thresholds are this spec's own figures, measured by running the gates once when the file was\n",
            "# written and rounded down: `qlab run` passes on the unchanged spec and blocks on any regression.\n",
            "# Raise them as the spec, the aliases and the cases get better. Guide: docs/your-api.md.\n",
        ]
    return [*lines, "version: 1\n", f"project: {scalar(starter.project)}\n", "\n"]


def _collection(starter: Starter, auth: Profile | None) -> list[str]:
    note = f"  # {starter.source_note}" if starter.source_note else ""
    lines = [
        "collection:\n",
        "  sources:\n",
        "    - name: api\n",
        f"      {starter.kind}: {scalar(starter.source)}{note}\n",
        f"  aliases: {ALIASES_FILE}\n",
    ]
    if auth is not None:
        lines.append(f"  auth: {auth.name}  # the scheme most operations require\n")
    return [*lines, "\n"]


def _profiles(starter: Starter, profiles: Sequence[Profile]) -> list[str]:
    unsupported = [s for s in starter.schemes if s.kind == "unsupported"]
    if not profiles and not unsupported:
        return []
    lines = ["auth_profiles:\n"] if profiles else []
    if profiles:
        lines.insert(
            0,
            "# One per security scheme of the spec. Each names the environment variable that holds the secret.\n",
        )
    for profile in profiles:
        lines.append(f"  {profile.name}:  # {profile.scheme.detail}\n")
        for key, value in profile.keys:
            if isinstance(value, str):
                lines.append(
                    f"    {key}: {scalar(value) if key in ('token_url', 'header', 'query') else value}\n"
                )
            elif value and isinstance(value[0], tuple):
                pairs = ", ".join(f"{scalar(k)}: {v}" for k, v in value)  # type: ignore[misc]
                lines.append(f"    {key}: {{{pairs}}}\n")
            else:
                lines.append(f"    {key}: [{', '.join(scalar(v) for v in value)}]\n")
        if profile.scheme.where == "cookie":
            lines.append(f"    # {profile.env[0]} holds `{profile.scheme.key}=<value>`\n")
    for scheme in unsupported:
        lines.append(
            f"# scheme {scheme.name!r} ({scheme.detail}): no profile type fits; write a `headers` profile\n"
        )
    return [*lines, "\n"]


def _environment(starter: Starter, auth: Profile | None) -> list[str]:
    variable = f"{starter.env_prefix}_BASE_URL"
    if starter.base_url:
        why = f"# the spec's server; set {variable} to test another deployment (a dev server, staging)\n"
        default = starter.base_url
    else:
        why = f"# the spec names no server: set {variable} (or run `qlab init` with --base-url)\n"
        default = "http://127.0.0.1"
    lines = [
        "environments:\n",
        f"  {ENVIRONMENT}:\n",
        f"    {why}",
        f"    base_url: ${{{variable}:-{default}}}\n",
    ]
    if auth is not None:
        lines.append(f"    auth: {auth.name}\n")
    return [*lines, "\n"]


def _suites(reads: bool, k: int) -> list[str]:
    lines = [
        "suites:\n",
        f"  {SEARCH_SUITE}:\n",
        "    mode: search\n",
        f"    cases: [gates/{SEARCH_SUITE}/*.yaml]\n",
        "    category: flow\n",
        "    cadence: every_search_change\n",
        f"    k: {k}\n",
    ]
    if reads:
        lines += [
            f"  {READS_SUITE}:\n",
            "    mode: execute\n",
            f"    cases: [gates/{READS_SUITE}/*.yaml]\n",
            "    category: step\n",
            "    cadence: dev_deployment_smoke\n",
            f"    environment: {ENVIRONMENT}\n",
        ]
    return [*lines, "\n"]


def _build_gate(figures: Figures | None) -> list[str]:
    lines = ["  - name: build\n", "    stage: build\n"]
    coverage = figures.schema_coverage if figures is not None else None
    if coverage is not None:
        lines += [
            "    stop_if:\n",
            f"      - schema_coverage_below: {floor_text(coverage, COVERAGE_PLACES)}  # {_comment(coverage)}\n",
        ]
    return lines


def _search_gate(figures: Figures | None) -> list[str]:
    lines = ["  - name: search\n", "    stage: search\n", f"    suites: [{SEARCH_SUITE}]\n"]
    if figures is None:
        return lines
    measured = figures.search
    n = measured.cases
    rows = [
        *_threshold("hit_at_k", measured.figures.get("hit_at_k"), places_for(n)),
        *_threshold("top_1", measured.figures.get("top_1"), places_for(n)),
        *_threshold("mrr", measured.figures.get("mrr"), places_for(n, spread=_RANK_STEPS)),
    ]
    return [*lines, "    thresholds:\n", *rows] if rows else lines


def _execute_gate(figures: Figures | None, *, gated: bool, note: str) -> list[str]:
    gate = ["- name: execute\n", "  stage: execute\n", f"  suites: [{READS_SUITE}]\n"]
    measured = figures.execute if figures is not None else None
    if gated and figures is None:
        return [f"  {line}" for line in gate]  # the measuring run: no thresholds yet
    if gated and measured is not None:
        rate = measured.figures.get("execute_read_success_rate")
        rows = _threshold("execute_read_success_rate", rate, places_for(measured.cases))
        stops = "[mutation_unsafe]" if _auth_failed(measured) else "[auth_not_ready, mutation_unsafe]"
        body = [*gate, "  thresholds:\n", *(r[2:] for r in rows), f"  stop_if: {stops}\n"]
        return [f"  {line}" for line in body]
    body = [*gate, "  thresholds:\n", '    execute_read_success_rate: ">= 1.0"\n',
            "  stop_if: [auth_not_ready, mutation_unsafe]\n"]  # fmt: skip
    comment = [f"  # {line}" for line in note.splitlines()] if note else []
    return [*(c + "\n" for c in comment), *(f"  # {line}" for line in body)]


def _auth_failed(measured: Measured) -> bool:
    return any(reason in AUTH_REASONS for reason in measured.reasons)


def _promotion(reads: bool) -> list[str]:
    lines = [
        "promotion:\n",
        "  # `qlab promote --baseline main.json --candidate pr.json --change alias_or_semantic_metadata`\n",
        "  alias_or_semantic_metadata:\n",
        f"    suites: [{SEARCH_SUITE}]\n",
        "    require: [metric_not_worse, no_required_regression]\n",
        "    metrics: [hit_at_k, top_1, mrr]\n",
    ]
    if reads:
        lines += [
            "  execute_enablement:\n",
            f"    suites: [{READS_SUITE}]\n",
            "    require: [auth_ready, read_assertions_pass]\n",
        ]
    return lines


def config_text(
    starter: Starter,
    *,
    profiles: Sequence[Profile],
    auth: Profile | None,
    reads: bool,
    figures: Figures | None,
    execute_gated: bool,
    execute_note: str = "",
) -> str:
    """qlab.yaml of the starter. ``figures`` None: the measuring run's version (no thresholds)."""
    k = figures.k if figures is not None else 5
    lines = [
        *_head(starter, figures),
        *_collection(starter, auth),
        *_profiles(starter, profiles),
        *_environment(starter, auth),
        *_suites(reads, k),
        "gates:\n",
        *_build_gate(figures),
        *_search_gate(figures),
    ]
    if reads:
        lines += _execute_gate(figures, gated=execute_gated, note=execute_note)
    lines += ["\n", *_promotion(reads)]
    return "".join(lines)

"""``qlab init --from-openapi FILE|URL`` as a library: pin the spec, write a starter project, measure it, and
write its thresholds at what was measured.

1. The spec is read and pinned into the project (``qlab.collection.pin``).
2. The starter is written (``qlab.project.starter``): an environment from the spec's servers (``--base-url``
   first; ``<PREFIX>_BASE_URL`` overrides either at run time), an auth profile per security scheme, a search
   case per operation, read-only execute cases for safe GETs — and gates without thresholds.
3. Its gates run once (``qlab.run.baseline``): build and search always; execute only when the server answers
   (one short probe first) and ``offline`` is off.
4. qlab.yaml is written again with the thresholds at the measured figures, rounded down. The execute gate is
   written commented out, with the reason and how to turn it on, when the server did not answer or no read
   case passed.

The project then loads and validates as written; a first ``qlab run`` on the unchanged spec passes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from qlab.collection.documents import is_url
from qlab.collection.pin import PinnedSpec, pin_spec
from qlab.errors import InputError
from qlab.project import load_project
from qlab.project.scaffold import schema_files, write_files
from qlab.project.starter import cases as starter_cases
from qlab.project.starter.auth import Profile, collection_profile, profiles
from qlab.project.starter.config import ENVIRONMENT, READS_SUITE, SEARCH_SUITE, config_text
from qlab.project.starter.model import Figures, Measured, Starter
from qlab.project.starter.queries import siblings
from qlab.run.baseline import measure, probe

K = 5


@dataclass(frozen=True, slots=True)
class StarterOutcome:
    """What ``init_from_openapi`` did, for the command to tell."""

    directory: Path
    written: tuple[Path, ...]
    spec: PinnedSpec
    figures: Figures
    profiles: tuple[Profile, ...] = ()
    auth: Profile | None = None
    base_url_variable: str = ""
    base_url: str | None = None
    reads: int = 0
    siblings: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def execute_gated(self) -> bool:
        return self.figures.execute is not None


def project_name(target: Path) -> str:
    """The project's name: the target folder's, made safe (``my api`` → ``my-api``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", target.resolve().name).strip("-") or "api"


def init_from_openapi(
    location: str,
    *,
    target: Path,
    base_url: str | None = None,
    offline: bool = False,
    force: bool = False,
    environ: Mapping[str, str] | None = None,
    progress: Callable[[str], None] = lambda _m: None,
) -> StarterOutcome:
    """Write and measure a starter project for the spec at ``location`` in ``target``; see the module
    docstring. Raises InputError/SpecError (exit 2) for an unusable spec or a target that holds the files."""
    env = os.environ if environ is None else environ
    if base_url is not None and not is_url(base_url):
        raise InputError(f"--base-url {base_url!r}: give an http(s) URL, e.g. http://127.0.0.1:8080")
    spec = pin_spec(location)
    if not spec.tools:
        raise InputError(
            f"{location}: the spec has no operations under `paths`: there is nothing to write search cases for"
        )
    starter = Starter(
        project=project_name(target),
        kind=spec.kind,
        source=spec.source,
        spec_label=_label(location),
        tools=spec.tools,
        title=spec.title,
        base_url=(base_url or (spec.servers[0] if spec.servers else None)),
        schemes=spec.schemes,
        source_note=_source_note(spec, location),
    )
    made = profiles(starter.schemes, prefix=starter.env_prefix)
    auth = collection_profile(starter.tools, made)
    eligible = starter_cases.safe_reads(starter.tools, limit=len(starter.tools))
    reads = eligible[: starter_cases.MAX_READS]
    variable = f"{starter.env_prefix}_BASE_URL"
    url = env.get(variable) or starter.base_url
    unreachable = _unreachable(url, reads=bool(reads), offline=offline, variable=variable)

    def qlab_yaml(figures: Figures | None, *, gated: bool, note: str = "") -> bytes:
        text = config_text(starter, profiles=made, auth=auth, reads=bool(reads), figures=figures,
                           execute_gated=gated, execute_note=note)  # fmt: skip
        return text.encode("utf-8")

    files: dict[str, bytes] = {
        "qlab.yaml": qlab_yaml(None, gated=not unreachable),
        starter_cases.SEARCH_FILE: starter_cases.search_cases(
            starter.tools, spec_label=starter.spec_label
        ).encode(),
        starter_cases.ALIASES_FILE: starter_cases.aliases_file(starter.spec_label).encode(),
        **schema_files(),
        **spec.files,
    }
    if reads:
        text = starter_cases.read_cases(reads, tools=starter.tools, found=len(eligible))
        files[starter_cases.READS_FILE] = text.encode("utf-8")
    written = write_files(target, files, force=force)
    config_path = target / "qlab.yaml"

    progress(f"measuring: build + search of {len(starter.tools)} operation(s)")
    searched = measure(config_path, stage="search")
    execute: Measured | None = None
    note = unreachable
    if reads and not unreachable:
        progress(f"measuring: {len(reads)} read-only request(s) against {url}")
        execute = measure(config_path, stage="execute").suites.get(READS_SUITE)
        note = _execute_note(execute, url=url or "", auth=auth)
        if note:
            execute = None
    figures = Figures(
        schema_coverage=searched.schema_coverage,
        search=searched.suites.get(SEARCH_SUITE, Measured()),
        k=K,
        execute=execute,
        execute_note=note,
    )
    write_files(target, {"qlab.yaml": qlab_yaml(figures, gated=execute is not None, note=note)}, force=True)
    load_project(config_path)  # the starter must validate as written; a ConfigError here is a bug to report
    return StarterOutcome(
        directory=target,
        written=tuple(written),
        spec=spec,
        figures=figures,
        profiles=tuple(made),
        auth=auth,
        base_url_variable=variable,
        base_url=url,
        reads=len(reads),
        siblings=siblings(starter.tools),
    )


def _label(location: str) -> str:
    return location if is_url(location) else Path(location).name


def _source_note(spec: PinnedSpec, location: str) -> str:
    if spec.pinned:
        return f"a copy of {_label(location)}; copy it again when the API changes"
    return f"not copied: {spec.note}"


def _unreachable(url: str | None, *, reads: bool, offline: bool, variable: str) -> str:
    """Why the execute suite cannot be measured now ("" when it can), with how to turn it on."""
    if not reads:
        return ""
    turn_on = (
        "To gate execute: uncomment the execute gate below, run `qlab run`, and set its threshold to the\n"
        "execute_read_success_rate the run reports."
    )
    if offline:
        return f"Not gated: --offline, no request was sent.\n{turn_on}"
    if not url:
        return f"Not gated: the spec names no server. Set {variable} (or environments.{ENVIRONMENT}.base_url).\n{turn_on}"
    why = probe(url)
    if why:
        return (
            f"Not gated: {url} did not answer when this file was written ({why}).\n"
            f"Start the API (or set {variable} to a deployment that answers; a dev server qlab starts goes in\n"
            f"environments.{ENVIRONMENT}.server). {turn_on}"
        )
    return ""


def _execute_note(measured: Measured | None, *, url: str, auth: Profile | None) -> str:
    """ "" when at least one read case passed (the gate is written), else why none did and what to do."""
    if measured is None or measured.cases == 0:
        return "Not gated: no read case ran."
    if measured.figures.get("execute_read_success_rate"):
        return ""
    reasons = ", ".join(f"{reason} x{count}" for reason, count in sorted(measured.reasons.items()))
    fix = ""
    if auth is not None and any(r.startswith("auth_") for r in measured.reasons):
        fix = f" Set {', '.join(auth.env)} (auth profile {auth.name}) to the API's credentials."
    return (
        f"Not gated: none of the {measured.cases} read case(s) passed against {url} ({reasons}).{fix}\n"
        "To gate execute: uncomment the execute gate below, run `qlab run`, and set its threshold to the\n"
        "execute_read_success_rate the run reports."
    )

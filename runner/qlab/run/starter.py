"""``qlab init --from-openapi FILE|URL`` as a library: pin the spec, write a starter project, measure it, and
write its thresholds at what was measured.

1. The spec is read and pinned into the project (``qlab.collection.pin``).
2. The starter is written (``qlab.project.starter``): an environment from the spec's servers (``--base-url``
   first; ``<PREFIX>_BASE_URL`` overrides at run time), auth profiles, a search case per operation, read-only
   execute cases for safe GETs, and gates without thresholds.
3. Its gates run once (``qlab.run.baseline``); execute only when the user named a server (``--base-url`` or
   ``--live``), announced before the first request; a token endpoint on another host is never contacted.
4. qlab.yaml is written again with thresholds at the measured figures (``qlab.run.thresholds``); the execute
   gate is commented out, with the reason, when no read case passed.

The project then loads and validates as written; a first ``qlab run`` on the unchanged spec passes."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from qlab.collection.documents import ReadPolicy, is_url
from qlab.collection.model import Tool
from qlab.collection.pin import PinnedSpec, pin_spec
from qlab.contracts.errors import InputError
from qlab.project import load_project
from qlab.project.scaffold import schema_files, write_files
from qlab.project.starter import cases as starter_cases
from qlab.project.starter.auth import Profile, collection_profile, profiles
from qlab.project.starter.config import AUTH_REASONS, ENVIRONMENT, READS_SUITE, SEARCH_SUITE, config_text
from qlab.project.starter.model import Figures, Measured, Starter, Threshold, clean_url
from qlab.project.starter.queries import siblings
from qlab.run import thresholds
from qlab.run.baseline import measure, probe

K = 5
TURN_ON = (
    "To gate execute: uncomment the execute gate below, run `qlab run`, and set its threshold to the\n"
    "execute_read_success_rate the run reports."
)


@dataclass(frozen=True, slots=True)
class StarterOutcome:
    """What ``init_from_openapi`` did, for the command to tell. ``rejected``: the reads the API rejected, in
    words with what to do ("" when none was)."""

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
    rejected: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def execute_gated(self) -> bool:
        return self.figures.execute is not None


def project_name(target: Path) -> str:
    """The project's name: the target folder's, made safe (``my api`` → ``my-api``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", target.resolve().name).strip("-") or "api"


def origin(url: str) -> str:
    """``https://api.example.com:8443/v1?x`` → ``https://api.example.com:8443``: the host a request reaches."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


def init_from_openapi(
    location: str,
    *,
    target: Path,
    base_url: str | None = None,
    live: bool = False,
    offline: bool = False,
    force: bool = False,
    headers: Mapping[str, str] | None = None,
    headers_env: Mapping[str, str] | None = None,
    remote_refs: bool = False,
    environ: Mapping[str, str] | None = None,
    progress: Callable[[str], None] = lambda _m: None,
) -> StarterOutcome:
    """Write and measure a starter project for the spec at ``location`` in ``target``; see the module
    docstring. Raises InputError/SpecError (exit 2) for an unusable spec or a target that holds the files.

    The spec's fetch sends ``headers`` (values) and ``headers_env`` (header name -> environment variable); a
    credential in the URL (user info, query) is used for the fetch too. None of them is written anywhere: files
    name the spec without its user info and query, and a source that is not pinned names the variables of
    ``headers_env`` only. ``remote_refs`` lets the spec's ``$ref``s fetch other documents by URL."""
    env = os.environ if environ is None else environ
    if base_url is not None and not (is_url(base_url) and clean_url(base_url)):
        raise InputError(f"--base-url {base_url!r}: give an http(s) URL, e.g. http://127.0.0.1:8080")
    missing = sorted({var for var in (headers_env or {}).values() if not env.get(var)})
    if missing:
        raise InputError(f"--header-env: {', '.join(missing)} is not set; set it to the header's value")
    fetch_headers = {**(headers or {}), **{name: env[var] for name, var in (headers_env or {}).items()}}
    policy = ReadPolicy(headers=fetch_headers, remote_refs=remote_refs, roots=(str(target.resolve()),))
    spec = pin_spec(location, policy=policy)
    if not spec.pinned and is_url(location) and headers:
        raise InputError(
            f"{spec.public}: the spec is not copied into the project ({spec.note}), so every build fetches it "
            "again: give its headers with --header-env NAME=VARIABLE, which qlab.yaml can name, not --header"
        )
    if not spec.tools:
        raise InputError(
            f"{spec.public}: the spec has no operations under `paths`: there is nothing to write search cases for"
        )
    starter = Starter(
        project=project_name(target),
        kind=spec.kind,
        source=spec.source,
        spec_label=_label(spec.public),
        tools=spec.tools,
        title=spec.title,
        base_url=base_url or next((s for s in spec.servers if clean_url(s)), None),
        schemes=spec.schemes,
        source_note=_source_note(spec, spec.public),
        remote_refs=remote_refs and not spec.pinned,
        headers_env=dict(headers_env or {}) if not spec.pinned else {},
    )
    made = profiles(starter.schemes, prefix=starter.env_prefix)
    auth = collection_profile(starter.tools, made)
    eligible = starter_cases.safe_reads(starter.tools, limit=len(starter.tools))
    reads = eligible[: starter_cases.MAX_READS]
    variable = f"{starter.env_prefix}_BASE_URL"
    url = base_url or env.get(variable) or starter.base_url
    contact = bool(reads) and (base_url is not None or live) and not offline
    unreachable = _not_measured(url, reads=bool(reads), contact=contact, offline=offline, variable=variable)
    if not unreachable and url:
        unreachable = _token_elsewhere(url, [tool for tool, _ in reads], made, auth, env)

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

    progress(f"measuring: build + search of {len(starter.tools)} operation(s), from the pinned spec")
    searched = measure(config_path, stage="search")
    execute: Measured | None = None
    note = unreachable
    if reads and not unreachable and url:
        progress(f"contacting {origin(url)}: {len(reads)} read-only request(s) to {url}")
        note = _no_answer(url, variable)
        if not note:
            execute = measure(config_path, stage="execute", environ={**env, variable: url}).suites.get(
                READS_SUITE
            )
            note = _execute_note(execute, url=url, auth=auth)
            if note:
                execute = None
    rejected = _rejected(execute, made) if execute is not None else ""
    search = searched.suites.get(SEARCH_SUITE, Measured())
    figures = Figures(
        schema_coverage=searched.schema_coverage,
        search=search,
        k=K,
        execute=execute,
        execute_note=note,
        thresholds=_thresholds(searched.schema_coverage, search, execute, rejected),
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
        rejected=rejected,
    )


def _label(location: str) -> str:
    return location if is_url(location) else Path(location).name


def _source_note(spec: PinnedSpec, location: str) -> str:
    if spec.pinned:
        return f"a copy of {_label(location)}; copy it again when the API changes"
    return f"not copied: {spec.note}"


def _thresholds(
    coverage: float | None, search: Measured, execute: Measured | None, rejected: str
) -> dict[str, tuple[Threshold, ...]]:
    out: dict[str, tuple[Threshold, ...]] = {}
    if coverage is not None:
        out["build"] = (thresholds.coverage(coverage),)
    out["search"] = _shares(search, {"hit_at_k": 1, "top_1": 1, "mrr": thresholds.RANK_STEPS})
    if execute is not None:
        rows = _shares(execute, {"execute_read_success_rate": 1})
        out["execute"] = tuple(Threshold(t.metric, t.value, t.measured, rejected) for t in rows)
    return out


def _shares(measured: Measured, spreads: Mapping[str, int]) -> tuple[Threshold, ...]:
    return tuple(
        thresholds.share(metric, value, cases=measured.cases, failing=measured.failing, spread=spread)
        for metric, spread in spreads.items()
        if (value := measured.figures.get(metric)) is not None
    )


def _not_measured(url: str | None, *, reads: bool, contact: bool, offline: bool, variable: str) -> str:
    """Why the execute suite is not measured now ("" when it is), with how to turn it on."""
    if not reads:
        return ""
    if offline:
        return f"Not gated: --offline, no request was sent.\n{TURN_ON}"
    if not contact:
        return (
            "Not gated: init sent no request to the API (measure it with --base-url URL, or --live for the\n"
            f"spec's server).\n{TURN_ON}"
        )
    if not url:
        return f"Not gated: the spec names no server. Set {variable} (or environments.{ENVIRONMENT}.base_url).\n{TURN_ON}"
    return ""


def _no_answer(url: str, variable: str) -> str:
    """One short probe before any case: "" when ``url`` answers, else why the execute suite is not gated."""
    why = probe(url)
    if not why:
        return ""
    return (
        f"Not gated: {url} did not answer when this file was written ({why}).\n"
        f"Start the API (or set {variable} to a deployment that answers; a dev server qlab starts goes in\n"
        f"environments.{ENVIRONMENT}.server). {TURN_ON}"
    )


def _token_elsewhere(
    url: str, tools: Sequence[Tool], made: Sequence[Profile], auth: Profile | None, environ: Mapping[str, str]
) -> str:
    """Why execute is not measured when a read would fetch a token from a host other than ``url``'s (the
    spec's ``tokenUrl``: the user did not name it), with its credentials set; else ""."""
    by_scheme = {p.scheme.name: p for p in made}
    used = {p.name: p for tool in tools for req in tool.security for s in req if (p := by_scheme.get(s))}
    if auth is not None:
        used.setdefault(auth.name, auth)
    for profile in used.values():
        token_url = str(profile.keys.get("token_url") or "")
        if not token_url or origin(token_url) == origin(url) or not all(environ.get(v) for v in profile.env):
            continue
        return (
            f"Not gated: measuring would send the client credentials of auth profile {profile.name} to\n"
            f"{origin(token_url)}, the spec's token endpoint, a host you did not name; init contacts only\n"
            f"{origin(url)}. {TURN_ON}"
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
    return f"Not gated: none of the {measured.cases} read case(s) passed against {url} ({reasons}).{fix}\n{TURN_ON}"


def _rejected(measured: Measured, made: Sequence[Profile]) -> str:
    """The reads the API rejected (counted per status) or that could not authenticate, with what to do; ""
    when every read that failed failed for another reason."""
    said, hints = [], []
    of = f"of {measured.cases} reads"
    if measured.rejected:
        said.append(
            f"rejected by the API: {', '.join(f'{s} x{n}' for s, n in measured.rejected.items())} {of}"
        )
        if any(status in (401, 403) for status in measured.rejected):
            variables = ", ".join(v for p in made for v in p.env)
            hints.append(
                f"check the credentials in {variables}"
                if made
                else f"add an auth profile (auth_profiles, environments.{ENVIRONMENT}.auth)"
            )
        if any(status >= 500 for status in measured.rejected):
            hints.append("a 5xx is the server failing: see its log")
    unready = {r: n for r, n in measured.reasons.items() if r in AUTH_REASONS}
    if unready:
        said.append(f"not sent: {', '.join(f'{r} x{n}' for r, n in sorted(unready.items()))} {of}")
        if made:
            hints.append(f"set {', '.join(v for p in made for v in p.env)}")
    if not said:
        return ""
    return f"{'; '.join(said)}: {', '.join([*hints, 'then raise this threshold'])}"

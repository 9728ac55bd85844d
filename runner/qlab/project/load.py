"""Load a project: qlab.yaml and every case file -> a validated :class:`Project`, or one ConfigError listing
every problem of every file.

The order: read and parse qlab.yaml; interpolate ``${VAR}``; validate against the config schema; build the
Config and run the semantic checks; read the case files of every suite (even when the config has errors, the
suites that are well-formed are still read, so one run reports everything); check ids across files; check the
referenced files. Warnings never fail a load; they travel with the Project (or with the ConfigError).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project import messages, schemas
from qlab.project.build_config import build_config
from qlab.project.cases import CaseFile, CaseSet, attribute, discover, load_file
from qlab.project.document import Document, JsonPath
from qlab.project.files import display_path, find_config, project_relative, read_document
from qlab.project.interpolate import expand, interpolate, names
from qlab.project.model import Case, Config, Origin, Suite
from qlab.project.references import check_references
from qlab.project.semantic_cases import check_critical
from qlab.project.semantic_config import check_config


@dataclass(frozen=True, slots=True)
class Project:
    """A validated project: the config, every case (suite order, then file order), the warnings found, and
    the case files read (for fingerprints)."""

    config: Config
    cases: tuple[Case, ...]
    warnings: tuple[Diagnostic, ...] = ()
    case_files: tuple[CaseFile, ...] = ()

    def cases_for(self, suite: str) -> tuple[Case, ...]:
        """The cases of ``suite``, in file order."""
        return tuple(case for case in self.cases if case.suite == suite)


def _salvage_suites(data: Any) -> dict[str, Suite]:
    """The well-formed suites of a config that failed validation, so their case files are still checked."""
    out: dict[str, Suite] = {}
    suites = data.get("suites") if isinstance(data, dict) else None
    if not isinstance(suites, dict):
        return out
    for name, item in suites.items():
        if not isinstance(item, dict) or item.get("mode") not in ("search", "plan", "execute"):
            continue
        cases = item.get("cases")
        globs = [cases] if isinstance(cases, str) else cases
        if isinstance(globs, list) and globs and all(isinstance(g, str) and g for g in globs):
            k = item.get("k")
            out[name] = Suite(name, item["mode"], tuple(globs), k=k if isinstance(k, int) and k > 0 else 8)
    return out


def _origin_of(doc: Document, rel: str) -> Any:
    def origin(path: JsonPath) -> Origin:
        line, col = doc.locate(path)
        return Origin(rel, line, col)

    return origin


# where an environment listens: read from the environment per runner, so the shards of one matrix may differ here
WHERE_KEYS = ("base_url", "allowed_hosts")
WHERE_SERVER_KEYS = ("url", "command")


def _read_config(
    config_path: Path, environ: Mapping[str, str]
) -> tuple[Document, tuple[str, str, tuple[tuple[str, str], ...]], list[Diagnostic]]:
    """The interpolated config document, its digest, shard digest (``Config.shard_digest``) and variables
    (``Config.variables``), and its interpolation + schema diagnostics."""
    raw, doc = read_document(config_path, display=display_path(config_path))
    written = doc.data
    data, found = interpolate(doc, environ)
    doc = Document(doc.file, data, doc.values, doc.keys)
    found.extend(messages.diagnostics(schemas.validate(data, "config"), doc))
    # the digest covers the bytes after interpolation: a run against another port is another configuration
    text = raw.decode("utf-8-sig")
    digest = hashlib.sha256(expand(text, environ, strict=False).encode("utf-8")).hexdigest()
    return doc, (digest, _shard_digest(data, written), _variables(text, environ)), found


def _variables(text: str, environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Each variable qlab.yaml reads, with a short digest of its value (``Config.variables``)."""
    return tuple(
        (name, "sha256:" + hashlib.sha256(f"{name}={environ.get(name, '')}".encode()).hexdigest()[:16])
        for name in names(text)
    )


def _shard_digest(data: Any, written: Any) -> str:
    """sha256 of the interpolated config with each environment's address as written (see ``WHERE_KEYS``)."""
    envs = data.get("environments") if isinstance(data, dict) else None
    raw_envs = written.get("environments") if isinstance(written, dict) else None
    if isinstance(envs, dict):
        raws: dict[str, Any] = raw_envs if isinstance(raw_envs, dict) else {}
        data = {
            **data,
            "environments": {name: _as_written(env, raws.get(name)) for name, env in envs.items()},
        }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _as_written(env: Any, raw: Any) -> Any:
    """An environment with its address keys as qlab.yaml writes them (``${PORT}`` unexpanded)."""
    if not isinstance(env, dict) or not isinstance(raw, dict):
        return env
    out = {**env, **{k: raw[k] for k in WHERE_KEYS if k in raw}}
    server, raw_server = env.get("server"), raw.get("server")
    if isinstance(server, dict) and isinstance(raw_server, dict):
        out["server"] = {**server, **{k: raw_server[k] for k in WHERE_SERVER_KEYS if k in raw_server}}
    return out


def load_project(
    path: Path | str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    case_files: Sequence[Path | str] | None = None,
) -> Project:
    """Load and validate the project whose qlab.yaml is ``path`` (default: :func:`find_config`).

    ``environ`` is used for ``${VAR}`` interpolation (default ``os.environ``). ``case_files`` limits the case
    files read to those given (each checked against the suite whose globs match it); by default every
    suite's globs are expanded. Raises ConfigError with every error and warning, sorted by file and line.
    """
    config_path = Path(path) if path is not None else find_config()
    config_path = Path(
        os.path.normpath(config_path if config_path.is_absolute() else Path.cwd() / config_path)
    )
    base = config_path.parent
    doc, (digest, shard_digest, variables), found = _read_config(
        config_path, os.environ if environ is None else environ
    )
    config: Config | None = None
    if not any(d.severity == "error" for d in found):
        config = build_config(doc.data, path=str(config_path), digest=digest, shard_digest=shard_digest,
                              origin=_origin_of(doc, project_relative(config_path, base)))  # fmt: skip
        config = dataclasses.replace(config, variables=variables)
        found.extend(check_config(config, doc))
    suites = dict(config.suites) if config is not None else _salvage_suites(doc.data)

    loaded = CaseSet()
    if case_files is None:
        owners, discovered = discover(suites, doc, base, config_path=config_path)
        found.extend(discovered)
        targets: dict[Path, Suite | None] = dict(owners)
    else:
        targets = attribute(
            [Path(f) if Path(f).is_absolute() else Path.cwd() / f for f in case_files], suites, base
        )
    for file, suite in targets.items():
        if suite is None and case_files is not None:
            found.append(Diagnostic(display_path(file), 0, 0, "", "is not a case file of any suite in "
                                    f"{display_path(config_path)}: checked against the case schema only", "warning"))  # fmt: skip
        load_file(file, suite, base=base, config=config, into=loaded)
    found.extend(loaded.diagnostics)
    cases, files = tuple(loaded.cases), tuple(loaded.files)
    del loaded  # the case files' texts, kept to locate duplicate ids
    if config is not None:
        if case_files is None:
            found.extend(check_critical(config, doc, cases))
        found.extend(check_references(config, doc))
    if config is None or any(d.severity == "error" for d in found):
        raise ConfigError(found)
    return Project(config, cases, tuple(sorted(found)), files)

"""What a result was measured on: the run fingerprint and the provenance (dataset, model, run
configuration), so a quality claim names its evidence and two runs can be compared safely.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.project.model import Config
from qlab.version import __version__


def sha256_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_digest(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys, no spaces)."""
    return sha256_bytes(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Checkout:
    """The git checkout a config lives in (``root`` is the config's folder outside git)."""

    root: Path
    commit: str | None


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def git_root(folder: Path) -> Path | None:
    """The root of the git checkout ``folder`` is in, or None (no checkout, no git, a refused repository)."""
    top = _git(["rev-parse", "--show-toplevel"], folder)
    return Path(top) if top else None


def checkout(config_path: str | Path) -> Checkout:
    """The repository root and HEAD commit of the config's folder; ``GITHUB_SHA`` when git is unavailable."""
    folder = Path(config_path).resolve().parent
    top = _git(["rev-parse", "--show-toplevel"], folder)
    commit = _git(["rev-parse", "HEAD"], folder) if top else None
    return Checkout(Path(top) if top else folder, commit or os.environ.get("GITHUB_SHA") or None)


def relative(path: str | Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (GitHub annotations need repo-relative paths); unchanged
    when it lies outside."""
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def model_of(config: Config) -> tuple[str | None, dict[str, Any]]:
    """The LLM model and its settings (never a key: only the env var's name)."""
    llm = config.engine.llm
    if llm is None:
        return None, {}
    return llm.model, {
        "base_url": llm.base_url,
        "temperature": llm.temperature,
        "timeout_sec": llm.timeout_sec,
        "api_key_env": llm.api_key_env,
    }


def engine_label(config: Config) -> str:
    engine = config.engine
    where = engine.url or engine.object
    return f"{engine.type}:{where}" if where else engine.type


def fingerprint(
    config: Config, *, collection_digest: str | None, commit: str | None, selection_digest: str
) -> dict[str, Any]:
    """The run fingerprint; ``digest`` covers every other field."""
    model, settings = model_of(config)
    body = {
        "config_digest": config.digest,
        "collection_digest": collection_digest,
        "engine": engine_label(config),
        "model": model,
        "model_settings": settings,
        "qlab_version": __version__,
        "git_commit": commit,
        "selection_digest": selection_digest,
    }
    if config.variables:  # only when qlab.yaml reads some: other fingerprints stay as they were
        body["config_variables"] = dict(config.variables)
    knowledge = _knowledge_digest(config)
    if (
        knowledge is not None
    ):  # only when qlab.yaml names a knowledge file: other fingerprints stay as they were
        body["knowledge_digest"] = knowledge
    return {"digest": canonical_digest(body), **body}


def _knowledge_digest(config: Config) -> str | None:
    """sha256 of the project knowledge file the run applied ("none" when it names one that does not exist)."""
    location = config.learning.knowledge_file
    if not location:
        return None
    path = Path(location)
    path = path if path.is_absolute() else Path(config.path).parent / path
    try:
        return sha256_bytes(path.read_bytes())
    except OSError:
        return "none"


def dataset(
    case_files: Iterable[Any], case_counts: Mapping[str, int], *, base: Path, root: Path
) -> dict[str, Any]:
    """The case files behind the run, each with its sha256 and the number of its cases that were selected.

    ``case_files`` are ``qlab.project.CaseFile`` items (``path`` relative to the config folder ``base``, with
    ``digest``) or plain paths (hashed here)."""
    files = []
    for item in case_files:
        path = base / str(getattr(item, "path", item))
        digest = getattr(item, "digest", None)
        if digest is None:
            try:
                digest = sha256_bytes(path.read_bytes())
            except OSError:
                digest = None
        elif not str(digest).startswith("sha256:"):
            digest = f"sha256:{digest}"
        rel = relative(path, root)
        files.append({"path": rel, "digest": digest, "cases": case_counts.get(rel, 0)})
    files.sort(key=lambda f: str(f["path"]))
    return {"files": files, "digest": canonical_digest([(f["path"], f["digest"]) for f in files])}


def provenance(
    config: Config,
    *,
    case_files: Iterable[Any],
    case_counts: Mapping[str, int],
    root: Path,
    run_configuration: Mapping[str, Any],
) -> dict[str, Any]:
    """The provenance rule: "public quality claims should include the dataset, model when applicable, run configuration"."""
    model, settings = model_of(config)
    return {
        "dataset": dataset(case_files, case_counts, base=Path(config.path).parent, root=root),
        "model": None if model is None else {"name": model, **settings},
        "run_configuration": dict(run_configuration),
    }

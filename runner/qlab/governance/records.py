"""Files the governance commands read and write: result artifacts, and the JSON records they keep.

A result artifact is read whole, checked for the few keys governance relies on, and identified by the sha256
of its bytes (an approval names that digest, so "the evaluated result" is exactly those bytes). Records
(suggestions, approvals, release history, proposals) are JSON written atomically: a temporary file in the
same folder, then a rename, so a crash never leaves half a record. A file named after something a record holds
is confined to its folder (``inside``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.adapters.atomic import write_atomic
from qlab.contracts.errors import InputError
from qlab.contracts.results import read_rows, to_json
from qlab.contracts.resultschema import artifact_problem
from qlab.run.verify import verified

PENDING = "pending_review"  # a proposal or suggestion nobody reviewed yet

# The stage objects of a case (the result shape), in pipeline order, plus what explains a failure.
STAGE_KEYS: tuple[str, ...] = ("search", "target_selector", "plan", "execute", "auth_readiness", "learning")
EVIDENCE_KEYS: tuple[str, ...] = (*STAGE_KEYS, "failure", "assertions", "latency_ms")


@dataclass(frozen=True, slots=True)
class Artifact:
    """A loaded result artifact: its JSON, where it came from, and ``digest`` = ``sha256:<hex of the bytes>``."""

    data: Mapping[str, Any]
    path: str
    digest: str

    @property
    def cases(self) -> list[dict[str, Any]]:
        cases: list[dict[str, Any]] = self.data["cases"]
        return cases

    @property
    def run_id(self) -> str:
        return str(self.data.get("run_id", ""))


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    """``sha256_digest`` of a file's bytes, read in blocks (a large result is never held whole)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def content_id(prefix: str, content: Any) -> str:
    """A stable id for ``content``: ``prefix`` + the first 12 hex digits of the sha256 of its canonical JSON."""
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"{prefix}{hashlib.sha256(canonical.encode()).hexdigest()[:12]}"


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds: ``2024-05-01T12:00:00Z``."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_json(path: str | Path, *, what: str) -> Any:
    """Parse a JSON file; a bad file raises InputError with ``file:line:col`` and what to do."""
    return _read(Path(path), what=what, missing=f"{what} not found", digest=False)[0]


def load_artifact(path: str | Path) -> Artifact:
    """Load a result artifact written by ``qlab run`` (or ``qlab merge``).

    Checks what governance needs — an object whose ``cases`` is a list of objects, each with a string ``case_id``
    and ``status``, and no case id twice; the message points at the JSON path that is wrong — then judges it
    again from its cases (``qlab.run.verify``): the decision, gates and metrics governance reads are those its
    case records give, and a result whose stored ones disagree is refused (``artifact_inconsistent``, exit 2).
    """
    p = Path(path)
    data, digest = _read(
        p,
        what="result artifact",
        missing="result artifact not found; run `qlab run` first or pass the right path",
    )
    check_artifact(data, str(p))
    read_rows(data["cases"])
    data = verified(
        data, str(p)
    )  # its decision and figures as its cases give them; refused when they disagree
    return Artifact(data=data, path=str(p), digest=digest)


def _read(p: Path, *, what: str, missing: str, digest: bool = True) -> tuple[Any, str]:
    """The parsed JSON of a file and the ``sha256_digest`` of its bytes ("" unless ``digest``: a record file needs
    none, and a suggestions file may be large). The file is read once, and each form of it (bytes, text) is let
    go before the next is made, so a large artifact's peak memory is its parsed form, not all three at once."""
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: {missing}") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read {what}: {exc.strerror or exc}") from None
    named = sha256_digest(raw) if digest else ""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: {what} is not UTF-8 text (byte {exc.start}); pass a JSON file") from None
    del raw
    try:
        return json.loads(text), named
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}:{exc.colno}: {what} is not valid JSON: {exc.msg}") from None
    except RecursionError:  # the C decoder recurses: nesting deeper than the interpreter allows
        raise InputError(f"{p}: {what} is nested too deeply to read as JSON") from None


def check_artifact(data: Any, where: str) -> None:
    """Raise InputError unless ``data`` has the shape governance relies on (see ``load_artifact``)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: $: a result artifact is a JSON object, got {type(data).__name__}")
    cases = data.get("cases")
    if not isinstance(cases, list):
        raise InputError(f"{where}: $.cases: missing or not a list; is this a `qlab run` result artifact?")
    seen: set[str] = set()
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise InputError(f"{where}: $.cases[{i}]: a case result is an object")
        for key in ("case_id", "status"):
            if not isinstance(case.get(key), str):
                raise InputError(f"{where}: $.cases[{i}].{key}: missing or not a string")
        if case["case_id"] in seen:
            raise InputError(f"{where}: $.cases[{i}].case_id: {case['case_id']!r} appears twice")
        seen.add(case["case_id"])
    for key in ("suites", "fingerprint", "stages"):
        if key in data and data[key] is not None and not isinstance(data[key], dict):
            raise InputError(f"{where}: $.{key}: expected an object")
    problem = artifact_problem(data, partial=True)
    if problem:
        raise InputError(
            f"{where}: {problem} (schemas/result.schema.json); is it a `qlab run` result artifact?"
        )


def evidence(case: Mapping[str, Any]) -> dict[str, Any]:
    """The stage objects of one case result (and its failure, assertions, latency): the trace evidence."""
    return {key: case[key] for key in EVIDENCE_KEYS if case.get(key) is not None}


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically (temp file in the same folder + rename)."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, default=to_json) + "\n")


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` atomically, creating parent folders (``qlab.adapters.atomic``)."""
    write_atomic(path, text)


def inside(folder: Path, name: str, *, what: str) -> Path:
    """``folder / name`` (normalised) for a file whose name comes from a record (a proposal's id, a case id): it must lie
    inside ``folder`` once ``..``, an absolute name and symbolic links are followed. Otherwise an InputError (exit
    2) names ``what`` and the name, before anything is written: a tampered record must not write elsewhere."""
    base = Path(os.path.realpath(folder))
    target = Path(os.path.realpath(base / name))
    if base not in target.parents:
        raise InputError(
            f"{what}: {name!r} leads outside {folder}; refusing to write there (was the record edited by "
            "hand?), nothing was written"
        )
    return folder / target.relative_to(base)


def resolve(config_path: str, relative: str) -> Path:
    """A path from qlab.yaml, resolved against the folder of qlab.yaml (absolute paths stay as they are)."""
    p = Path(relative)
    return p if p.is_absolute() else Path(config_path).resolve().parent / p

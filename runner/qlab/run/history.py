"""Run history: the result of each run kept under the output folder, a bounded number of them.

``<out>/history/<n>-<run_id>.json`` is the result artifact exactly as the run wrote it — scrubbed, since it is
the very file of the output set (a hard link to it, so keeping it costs no copy; a copy where the file system has
no hard links). ``n`` counts up from the newest entry, so the names sort oldest first (two runs may start in the
same second). After each run the
oldest entries beyond ``output.history`` (qlab.yaml; 0 keeps none) are removed, under the output folder's lock
(``qlab.run.outputs``) like the output sets themselves.

Readers: ``latest_brief`` (the last run that decided with the same configuration: the "since the last run" block
of the console and the summary), ``latest`` and ``runs`` (``qlab report --trend``: every metric over the kept
runs). ``previous_result`` and ``LaterResult`` read the last result in the output folder for ``--last-failed`` and
the learn gate.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from sys import intern
from typing import Any

from qlab.contracts.errors import InputError, QlabError
from qlab.contracts.results import read_rows
from qlab.run import artifact

FOLDER = "history"
DEFAULT_LIMIT = 10
PREVIOUS_MAX_BYTES = (
    64 * 1024 * 1024
)  # a larger previous result in another layout is read only for --last-failed
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def folder_of(result: Path) -> Path:
    """The history folder beside a result file."""
    return result.parent / FOLDER


_NUMBERED = re.compile(r"^(\d+)-")


def _number(path: Path) -> int:
    found = _NUMBERED.match(path.name)
    return int(found.group(1)) if found else 0


def entries(folder: Path) -> list[Path]:
    """The kept results, oldest first (by the number their names start with)."""
    try:
        found = [
            p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".") and p.is_file()
        ]
    except OSError:
        return []
    return sorted(found, key=lambda p: (_number(p), p.name))


def latest(folder: Path) -> dict[str, Any] | None:
    """The newest kept result that can be read (an unreadable one is passed over: history is a convenience)."""
    for path in reversed(entries(folder)):
        try:
            return artifact.read(path)
        except InputError:
            continue
    return None


def latest_brief(
    folder: Path, *, read: Mapping[str, Any] | None = None, like: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The run "since the last run" compares with: the newest kept run that decided (PASS or BLOCK: an ERROR run
    judged nothing, so it is no baseline) and, with ``like`` (the run being compared), that ran the same
    configuration — the same qlab.yaml and the same selection (``same_configuration``). Each case cut to what a
    comparison of two runs reads (``case_id``, ``suite``, ``status``, ``failure``, ``critical``, ``flaky``). Read
    line by line as the learn gate reads it (``read_lines``, each case cut as it is read), so a previous run is
    never held whole. A file in another layout is read whole.

    ``read``: a run as the caller already read it (its cases with at least those fields, ``_path`` naming the
    file): when an entry is that very file (the history keeps a hard link to each run's result), it is cut from
    ``read`` instead of read again."""
    for path in reversed(entries(folder)):
        brief = _brief(path, read)
        if brief is not None and decided(brief) and (like is None or same_configuration(brief, like)):
            return brief
    return None


def _brief(path: Path, read: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if read is not None and _same_file(path, read.get("_path")):
        return _brief_of(read)
    try:
        return _brief_of(read_lines(path, _cut(_BRIEF_KEYS)))
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    try:
        return _brief_of(artifact.read(path))
    except InputError:
        return None


def decided(run: Mapping[str, Any]) -> bool:
    """The run reached a verdict on the product: PASS or BLOCK (not ERROR, not a run still going)."""
    decision = run.get("decision")
    return isinstance(decision, Mapping) and decision.get("verdict") in ("pass", "block")


def same_configuration(run: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Both runs ran the same qlab.yaml with the same selection (``--suite``, ``--stage``, ``--case``, ``--tag``,
    ``--cadence``, ``--last-failed``): their cases are like for like."""

    def key(data: Mapping[str, Any]) -> tuple[Any, Any]:
        provenance = data.get("provenance")
        setup = provenance.get("run_configuration") if isinstance(provenance, Mapping) else None
        setup = setup if isinstance(setup, Mapping) else {}
        return setup.get("config"), setup.get("selection")

    return key(run) == key(other)


def _same_file(path: Path, other: object) -> bool:
    try:
        return isinstance(other, str) and os.path.samefile(path, other)
    except OSError:
        return False


_BRIEF_KEYS = ("case_id", "suite", "status", "failure", "critical", "flaky")


def _brief_of(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run (as read whole, or by ``for_learning``) with each case cut to ``_BRIEF_KEYS``; what the reader added
    (``_path``, ``_lean``) left out."""
    out = {k: v for k, v in run.items() if not k.startswith("_")}
    out["cases"] = [
        {key: case[key] for key in _BRIEF_KEYS if key in case}
        for case in run.get("cases") or ()
        if isinstance(case, dict)
    ]
    return out


def read_lines(path: Path, case: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """A result file as qlab writes it (``qlab.run.artifact.chunks``: one top-level member per line, one case per
    line), read line by line: the top-level members whole, each case's line through ``case`` (what to keep of
    it), so a large run is never held whole. ValueError for a file in another layout or not a result."""
    out: dict[str, Any] = {}
    cases: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        if handle.readline().strip() != "{":
            raise ValueError("not qlab's layout")
        in_cases = False
        for line in handle:
            text = line.strip()
            if in_cases:
                if text in ("]", "],"):
                    in_cases = False
                    continue
                cases.append(case(text.removesuffix(",")))
                continue
            text = text.removesuffix(",")
            if text == '"cases": [':
                in_cases = True
            elif text == "}":
                break
            elif text:
                out.update(json.loads("{" + text + "}"))
    if "run_id" not in out:
        raise ValueError("not a result artifact")
    out.setdefault("cases", cases)
    if cases:
        out["cases"] = cases
    return out


# what the learn gate reads of each case of the previous run (the signals that compare two runs)
_LEARN_KEYS = ("case_id", "suite", "mode", "status", "failure", "critical", "flaky", "auth_readiness")


def for_learning(path: Path) -> dict[str, Any]:
    """The previous run as the learn gate compares with it: the top-level members whole, each case cut to its
    status, failure and auth readiness (``_cut``). A proposal built from a case's whole record reads it again
    with ``cases_by_id``, so a large previous run is never held whole. ValueError as ``read_lines``."""
    return read_lines(path, _cut(_LEARN_KEYS))


_REPEATED = ("suite", "mode", "status")  # the same few values in every case of a run: one string each


def _cut(keys: Sequence[str]) -> Callable[[str], dict[str, Any]]:
    """Each case's line cut to ``keys``."""

    def case(text: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(text)
        cut = {key: data[key] for key in keys if key in data}
        for key in _REPEATED:
            if isinstance(cut.get(key), str):
                cut[key] = intern(cut[key])
        return cut

    return case


def cases_by_id(path: Path, ids: Collection[str]) -> dict[str, dict[str, Any]]:
    """The whole records of the cases ``ids`` names in a result file in qlab's layout, read line by line (the
    others are dropped as they are read). ValueError as ``read_lines``."""
    found: dict[str, dict[str, Any]] = {}

    def case(text: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(text)
        if data.get("case_id") in ids:
            try:
                read_rows([data])  # its search rows as a run holds them
            except (KeyError, TypeError):
                raise ValueError("not qlab's layout") from None
            found[str(data["case_id"])] = data
        return {}

    read_lines(path, case)
    return found


def runs(folder: Path) -> list[dict[str, Any]]:
    """Every kept result that can be read, oldest first."""
    out = []
    for path in entries(folder):
        with contextlib.suppress(InputError):
            out.append(artifact.read(path))
    return out


def keep(written: Path, run_id: str, folder: Path, *, limit: int = DEFAULT_LIMIT) -> Path | None:
    """Keep the result file ``written`` (as the run wrote it) as ``<folder>/<run_id>.json``, then remove the
    oldest entries beyond ``limit``. Returns the kept file; None when ``limit`` is 0 or it could not be kept (a
    full disk loses the history entry, never the run's outputs)."""
    if limit <= 0:
        return None
    number = max((_number(p) for p in entries(folder)), default=0) + 1
    name = f"{number:06d}-{_UNSAFE.sub('_', run_id or 'run')}.json"
    target = folder / name
    temporary = folder / f".{name}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        source = Path(os.path.realpath(written))
        try:
            os.link(source, temporary)  # the set's own bytes: nothing copied, nothing scrubbed again
        except OSError:
            shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        return None
    for old in entries(folder)[:-limit]:
        with contextlib.suppress(OSError):
            old.unlink()
    return target


def previous_result(path: Path, *, needed: bool, wanted: bool) -> dict[str, Any] | None:
    """The last result in the output folder: ``--last-failed`` needs it (read and checked whole); the learn gate
    (``wanted``) compares with it (the signals that need two runs) as ``for_learning`` reads it, line by line, or
    whole when it is in another layout and small enough to read at no real cost. An unreadable one is compared
    with nothing. A run with neither does not read it."""
    if not path.is_file() or not (needed or wanted):
        return None
    if needed:
        return artifact.read(path)
    try:
        try:
            data = for_learning(path)
            data["_lean"] = True  # cut to the comparison fields: a proposal reads its case again (by _path)
        except (ValueError, UnicodeDecodeError):
            if path.stat().st_size > PREVIOUS_MAX_BYTES:
                return None
            data = artifact.read(path)
    except (OSError, QlabError):
        return None  # not a result this qlab reads: the learn gate compares with nothing
    data["_path"] = str(path)  # a proposal reads its digest (and its case's whole record) from the file
    return data


class LaterResult:
    """The previous run, read for the learn gate when it starts (``RunOptions.read_previous``), once; ``read``:
    what was read (None before the call, or when nothing could be)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read: dict[str, Any] | None = None
        self.called = False

    def __call__(self) -> dict[str, Any] | None:
        if not self.called:
            self.called = True
            self.read = previous_result(self.path, needed=False, wanted=True)
        return self.read

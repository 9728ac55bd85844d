"""Where a run's outputs go and how they are written: the result JSON, the JUnit XML and the Markdown summary, in
the config's output folder (``output:`` in qlab.yaml, ``--out``/``--junit`` override). A shard writes
``qlab-shard-<i>-of-<N>.json`` (and its JUnit and summary) so a matrix's files never clash.

**One run, one set.** A reader sees the previous run's three files or this run's, never a mix, whenever qlab
is killed: they are written into a fresh folder under ``<out>/.qlab-sets/`` and switched in by atomically
replacing one symbolic link; the visible files are links through it (plain files of an earlier qlab are first
snapshotted into a set). Without symbolic links each file is replaced on its own. What killed runs left is
removed when the next run starts, unless another run holds the folder's lock.

Every byte goes through the run's scrubber first (``qlab.adapters.scrub.SecretSet``): the artifact as an object, JUnit
and the summary rendered from it and scrubbed again as text."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.adapters.atomic import FILE_MODE, write_atomic
from qlab.adapters.scrub import SecretSet, neutralize_commands
from qlab.contracts.errors import InputError
from qlab.project.model import Config
from qlab.report import junit, markdown
from qlab.run.artifact import chunks
from qlab.run.options import RunEvent
from qlab.run.shard import ShardSpec

SETS = ".qlab-sets"
ROLES = ("result", "junit", "summary")
# the JUnit report last: what the summary makes is freed before it, and the report's testcases (kept for the
# learn gate's provisional copy) are made in the room it leaves, lowering the peak
_WRITE_ORDER = ("result", "summary", "junit")
_LOCKS: dict[Path, Any] = {}  # folder -> the open lock file this process holds until it exits


@dataclass(frozen=True, slots=True)
class OutputPaths:
    result: Path
    junit: Path
    summary: Path

    def links(self) -> dict[str, str]:
        """Artifact links for the summary, relative to the summary's folder."""
        base = self.summary.parent
        return {
            "result": _rel(self.result, base),
            "junit": _rel(self.junit, base),
            "summary": _rel(self.summary, base),
        }

    def by_role(self) -> dict[str, Path]:
        return {"result": self.result, "junit": self.junit, "summary": self.summary}

    @property
    def store(self) -> Path:
        """The folder of the sets (beside the result)."""
        return self.result.parent / SETS


def _rel(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when below it. Symbolic links are not followed: the visible names are links
    into the current set, and a link in the summary must name them, not one set's folder."""
    target, folder = Path(os.path.abspath(path)), Path(os.path.abspath(base))
    try:
        return target.relative_to(folder).as_posix()
    except ValueError:
        return path.as_posix()


def output_paths(
    config: Config,
    *,
    out_dir: str | Path | None = None,
    junit_path: str | Path | None = None,
    shard: ShardSpec | None = None,
) -> OutputPaths:
    """The output files of a run, as absolute paths (what the console and the step outputs name): ``out_dir``
    (relative to the working directory) or the config's output dir (relative to qlab.yaml)."""
    folder = absolute(out_dir if out_dir is not None else Path(config.path).parent / config.output.dir)
    junit_file = absolute(junit_path) if junit_path else None
    if shard is not None:
        label = shard.label
        return OutputPaths(
            result=folder / f"qlab-shard-{label}.json",
            junit=junit_file or folder / f"junit-shard-{label}.xml",
            summary=folder / f"summary-shard-{label}.md",
        )
    return OutputPaths(
        result=folder / config.output.result,
        junit=junit_file or folder / config.output.junit,
        summary=folder / config.output.summary,
    )


def absolute(path: str | Path) -> Path:
    """``path`` made absolute against the working directory, without following symbolic links (the visible
    output files are links into the current set)."""
    return Path(os.path.abspath(path))


def prepare(paths: OutputPaths) -> None:
    """Create the output folders before any case runs, so a bad ``--out``/``--junit`` is an InputError (exit 2)
    up front, not an error after the whole run; then take the folder's lock and remove what killed runs left."""
    for folder in dict.fromkeys(p.parent for p in (paths.result, paths.junit, paths.summary)):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"{folder}: cannot create the output folder: {exc.strerror or exc}; check --out, --junit and "
                "output.dir in qlab.yaml"
            ) from None
    if _lock(paths.store):
        remove_stale(paths)


def write_file(path: Path, text: str | Iterable[str]) -> Path:
    """``write_atomic``, with a file system refusal (a file where a folder should be, no space, no permission)
    reported as an InputError naming the file."""
    try:
        return write_atomic(path, text)
    except OSError as exc:
        raise InputError(
            f"{path}: cannot be written: {exc.strerror or exc}; check --out, --junit and output.dir in qlab.yaml"
        ) from None


def clean_artifact(artifact: Mapping[str, Any], secrets: SecretSet | None) -> dict[str, Any]:
    """The artifact as it may be written: every known secret replaced (by value; its own keys are kept)."""
    if not secrets:
        return dict(artifact)
    cleaned: dict[str, Any] = secrets.scrubber()(artifact)
    return cleaned


def _texts(
    artifact: Mapping[str, Any],
    paths: OutputPaths,
    secrets: SecretSet | None,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Callable[[], Iterable[str]]]:
    """Each role's text (made when written: a large result is never held whole). ``previous``: the run before
    (its kept result, ``qlab.run.history``), for the summary's "since the last run" block."""
    clean = clean_artifact(artifact, secrets)
    text = secrets.scrubber().stream if secrets else (lambda pieces: pieces)
    return {
        "result": lambda: chunks(clean),  # already scrubbed as an object: numbers stay JSON numbers
        "junit": lambda: text(junit.chunks(clean)),
        "summary": lambda: text([markdown.render(clean, links=paths.links(), previous=previous)]),
    }


def write_outputs(
    artifact: Mapping[str, Any],
    paths: OutputPaths,
    *,
    secrets: SecretSet | None = None,
    previous: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write the result, JUnit and summary as one set and switch it in (see the module docstring); returns the
    visible paths. ``previous``: see ``_texts``."""
    texts = _texts(artifact, paths, secrets, previous)
    if not _links_work(paths.store):
        for role, path in paths.by_role().items():
            write_file(path, texts[role]())
        return list(paths.by_role().values())
    try:
        for folder in dict.fromkeys(p.parent for p in paths.by_role().values()):
            folder.mkdir(parents=True, exist_ok=True)
        if not _linked(paths):
            _adopt_visible(paths)
        folder = _write_set(paths, texts)
        _switch(paths, folder)
        # older sets go, but only under the folder's lock: another run writing here may be making its own
        held = paths.store in _LOCKS
        if held or _lock(paths.store):
            _remove_other_sets(paths, keep=folder.name)
            if not held:
                release(paths)
    except OSError as exc:
        raise InputError(
            f"{paths.result.parent}: the outputs cannot be written: {exc.strerror or exc}; check --out, --junit "
            "and output.dir in qlab.yaml"
        ) from None
    return list(paths.by_role().values())


def stage_outputs(
    artifact: Mapping[str, Any], paths: OutputPaths, *, secrets: SecretSet | None = None
) -> list[Path]:
    """Write a set without switching it in (the learn gate scans the bytes the run would write); returns its
    files. The next ``write_outputs`` removes it."""
    texts = _texts(artifact, paths, secrets)
    try:
        folder = _write_set(paths, texts)
    except OSError as exc:
        raise InputError(f"{paths.store}: the outputs cannot be written: {exc.strerror or exc}") from None
    return [folder / role for role in ROLES]


def rescrub_logs(paths: Iterable[Path], secrets: SecretSet) -> None:
    """Scrub finished log files again with every secret the run knew at its end: a line written before a secret
    was learnt (a dev server printing the session cookie it set) is cleaned now. A log only changes when it held
    one; it is replaced atomically."""
    if not secrets:
        return
    clean = secrets.scrubber()
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        scrubbed = neutralize_commands(clean.text(text))
        if scrubbed != text:
            with contextlib.suppress(OSError):
                write_atomic(path, scrubbed)


def temp_paths(folder: Path) -> OutputPaths:
    return OutputPaths(folder / "result.json", folder / "junit.xml", folder / "summary.md")


# ---------------------------------------------------------------------------------------------- the set switch


def _current(paths: OutputPaths) -> Path:
    return paths.store / f"{paths.result.name}.current"


def _target(paths: OutputPaths, role: str, visible: Path) -> str:
    """What the visible file of ``role`` links to: the role's file through the ``current`` link, relative."""
    return os.path.relpath(_current(paths) / role, visible.parent)


def _linked(paths: OutputPaths) -> bool:
    """Every visible file is already the link it should be (the case after this folder's first run)."""
    return _current(paths).is_symlink() and all(
        p.is_symlink() and os.readlink(p) == _target(paths, role, p) for role, p in paths.by_role().items()
    )


def _token() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{time.monotonic_ns() % 1_000_000:06d}"


def _write_set(paths: OutputPaths, texts: Mapping[str, Callable[[], Iterable[str]]]) -> Path:
    paths.store.mkdir(parents=True, exist_ok=True)
    folder = paths.store / f"{paths.result.name}.{_token()}"
    folder.mkdir()
    for role in _WRITE_ORDER:
        with open(folder / role, "w", encoding="utf-8", newline="\n") as handle:
            handle.writelines(texts[role]())
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):  # readable as a plain open() would make it (a CI web server)
            os.chmod(folder / role, FILE_MODE)
    _fsync_dir(folder)
    return folder


def _switch(paths: OutputPaths, folder: Path) -> None:
    """The one rename that replaces the visible set, then the visible links (already right after the first
    run, so nothing changes for a reader but the set they lead to)."""
    _relink(_current(paths), folder.name)
    _fsync_dir(paths.store)
    for role, visible in paths.by_role().items():
        _relink(visible, _target(paths, role, visible))


def _relink(link: Path, target: str) -> None:
    """Make ``link`` a symbolic link to ``target`` in one rename (nothing happens when it already is one)."""
    if link.is_symlink() and os.readlink(link) == target:
        return
    temporary = link.parent / f".{link.name}.{_token()}.link"
    os.symlink(target, temporary)
    try:
        os.replace(temporary, link)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_dir(link.parent)


def _adopt_visible(paths: OutputPaths) -> None:
    """Before the first switch in a folder: the files readers see now (plain files of an earlier qlab, or
    anything else at those names) become a set of their own, and the visible names become links to it. Each
    name is replaced by a link to a copy of what it showed, so readers never see a change until the switch."""
    paths.store.mkdir(exist_ok=True)  # beside the result, whose folder exists
    folder = paths.store / f"{paths.result.name}.{_token()}"
    folder.mkdir()
    for role, visible in paths.by_role().items():
        if visible.is_file():  # a plain file, or a link that leads to one
            shutil.copyfile(visible, folder / role)
    _fsync_dir(folder)
    _relink(_current(paths), folder.name)
    for role, visible in paths.by_role().items():
        if visible.is_dir() and not visible.is_symlink():
            raise IsADirectoryError(21, "a folder stands where an output file belongs", str(visible))
        _relink(visible, _target(paths, role, visible))


def _remove_other_sets(paths: OutputPaths, *, keep: str) -> None:
    prefix = f"{paths.result.name}."
    for entry in _entries(paths.store):
        if entry.name.startswith(prefix) and entry.name != keep and not entry.is_symlink() and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def remove_stale(paths: OutputPaths) -> None:
    """What killed runs left: sets no link points to, half-made links, and atomic writes' temp files
    (``.<name>.<random>.tmp``) beside the outputs. Only called while holding the folder's lock."""
    current = _current(paths)
    live = os.readlink(current) if current.is_symlink() else None
    prefix = f"{paths.result.name}."
    for entry in _entries(paths.store):
        if entry.name.endswith(".link") and entry.name.startswith("."):
            with contextlib.suppress(OSError):
                entry.unlink()
        elif (
            entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink() and entry.name != live
        ):
            shutil.rmtree(entry, ignore_errors=True)
    for folder in dict.fromkeys(p.parent for p in paths.by_role().values()):
        for entry in _entries(folder):
            stale = entry.name.startswith(".") and entry.name.endswith((".tmp", ".link"))
            if stale and (entry.is_symlink() or entry.is_file()):
                with contextlib.suppress(OSError):
                    entry.unlink()


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _links_work(store: Path) -> bool:
    """True where symbolic links can be made in the output folder (checked once per folder)."""
    known = _LINKS.get(store)
    if known is None:
        probe = store.parent / f".qlab-link-probe-{os.getpid()}"
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(".", probe)
            known = True
        except (OSError, NotImplementedError):
            known = False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(probe)
        _LINKS[store] = known
    return known


_LINKS: dict[Path, bool] = {}


def release(paths: OutputPaths) -> None:
    """Give the folder's lock back (the end of a command; a process that dies gives it back anyway)."""
    handle = _LOCKS.pop(paths.store, None)
    if handle is not None:
        handle.close()


def _lock(store: Path) -> bool:
    """Take ``<store>/.lock`` for the rest of this process (the kernel drops it when the process dies, however
    it dies). False when another live qlab run holds it, or locks are not available."""
    if store in _LOCKS:
        return True
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False  # pragma: no mutate (Windows only: no fcntl here)
    try:
        store.mkdir(parents=True, exist_ok=True)
        handle = open(store / ".lock", "a")  # noqa: SIM115 - held for the process' life
    except OSError:
        return False
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    _LOCKS[store] = handle
    return True


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # make renames durable where the platform allows it
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class RunningStatus:
    """``status.json`` beside the result while a run goes on: the eval run's status ``running`` made visible to
    whoever watches the output folder (a dashboard, another CI step): the run id, when it started, the gate it is
    at and the gates done, qlab's process id. Written at each gate's start and end (atomically), removed once the
    run's result is written (its own ``status`` says completed, failed or cancelled). A status file left behind
    names a process that no longer runs: the run was killed."""

    NAME = "status.json"

    def __init__(self, folder: Path) -> None:
        self.path = folder / self.NAME
        self.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.done: list[dict[str, Any]] = []

    def __call__(self, event: RunEvent) -> None:
        if event.kind not in ("stage_start", "stage_end"):
            return
        if event.kind == "stage_end":
            self.done.append({"gate": event.gate, "stage": event.stage, "status": event.status})
        status = {
            "status": "running",
            "run_id": event.run_id,
            "started_at": self.started_at,
            "pid": os.getpid(),
            "gate": event.gate if event.kind == "stage_start" else None,
            "stage": event.stage if event.kind == "stage_start" else None,
            "cases": event.cases if event.kind == "stage_start" else None,
            "gates_done": self.done,
        }
        with contextlib.suppress(OSError):  # a progress note: a folder that refuses it stops no run
            write_atomic(self.path, json.dumps(status, indent=2) + "\n")

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

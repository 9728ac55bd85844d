"""Finding and reading the files a project names: qlab.yaml, case globs, referenced files.

Paths inside qlab.yaml are relative to its folder (:func:`resolve`). Messages show paths relative to the
working directory when the file is below it (:func:`display_path`), so they are clickable in a terminal and in
CI logs; models keep paths relative to the config folder (stable across machines).

Case globs are expanded here, not by :mod:`glob` (:func:`expand_glob`): ``**`` never follows a symbolic link to
a folder (a link to ``/`` or a link loop would walk the whole machine, ``/proc`` included), a glob that visits
more than ``MAX_GLOB_ENTRIES`` entries is refused, and only regular files match (a FIFO would hang the reader).
:func:`outside` says when a case file lies outside the project — the repository that holds qlab.yaml, or its
folder when it is in none — itself or through a symbolic link.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from qlab.contracts.errors import InputError
from qlab.project.document import Document, JsonPath
from qlab.project.jsonio import parse_json, parse_jsonl
from qlab.project.model import Config
from qlab.project.textio import DEFAULT_MAX_BYTES, read_text
from qlab.project.yamlio import parse_yaml

CONFIG_NAMES = ("qlab.yaml", "qlab.yml")
YAML_SUFFIXES = (".yaml", ".yml")
JSON_SUFFIXES = (".json",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CASE_SUFFIXES = YAML_SUFFIXES + JSON_SUFFIXES + JSONL_SUFFIXES


def resolve(config: Config | str | Path, rel: str | Path) -> Path:
    """``rel`` (as written in qlab.yaml) resolved against the folder of ``config`` (a Config or its path).
    Absolute paths are returned as they are."""
    config_path = Path(config.path) if isinstance(config, Config) else Path(config)
    target = Path(rel).expanduser()
    return target if target.is_absolute() else config_path.parent / target


def _relative(path: Path, base: Path) -> str | None:
    """``path`` below ``base`` (both made absolute and normalised; symlinks are left alone, as resolving them
    costs system calls per component, per file), or None. Plain string work: this runs once per case file."""
    target = os.path.normpath(os.path.join(os.getcwd(), path))
    folder = os.path.normpath(os.path.join(os.getcwd(), base))
    if target == folder:
        return "."
    prefix = folder if folder.endswith(os.sep) else folder + os.sep
    return target[len(prefix) :] if target.startswith(prefix) else None


def display_path(path: Path, *, cwd: Path | None = None) -> str:
    """``path`` relative to the working directory when it lies below it, else absolute: what the user's shell
    would show, so a message's location can be clicked."""
    rel = _relative(path, cwd or Path.cwd())
    return rel if rel is not None else os.path.normpath(os.path.join(os.getcwd(), path))


def project_relative(path: Path, base: Path) -> str:
    """``path`` relative to the config folder ``base``, with forward slashes (as stored in models and results)."""
    rel = _relative(path, base)
    return Path(rel if rel is not None else os.path.normpath(os.path.join(os.getcwd(), path))).as_posix()


def find_config(start: Path | None = None) -> Path:
    """The nearest ``qlab.yaml`` from ``start`` (default: the working directory) upwards, stopping at the
    repository root (a folder with ``.git``) or the filesystem root. InputError when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
        if (folder / ".git").exists():
            break
    raise InputError(
        f"no qlab.yaml found in {here} or its parent folders (up to the repository root); "
        "run `qlab init` to create one, or pass --config PATH"
    )


def parse_document(text: str, display: str, suffix: str) -> Document:
    """Parse ``text`` by file suffix: .json, .jsonl/.ndjson, else YAML. Raises ConfigError."""
    suffix = suffix.lower()
    if suffix in JSON_SUFFIXES:
        return parse_json(text, display)
    if suffix in JSONL_SUFFIXES:
        return parse_jsonl(text, display)
    return parse_yaml(text, display)


def parse_items(text: str, display: str, suffix: str) -> Iterator[tuple[JsonPath, Any, Document]]:
    """The items of a file whose root is a list, one at a time, as ``((i,), item, document locating it)``; a root
    that is not a list, or an empty one, whole as ``((), root, document)``."""
    doc = parse_document(text, display, suffix)
    if isinstance(doc.data, list) and doc.data:
        for index, item in enumerate(doc.data):
            yield (index,), item, doc
    else:
        yield (), doc.data, doc


def read_document(path: Path, *, display: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, Document]:
    """Read and parse a file (``read_text`` guards, then :func:`parse_document`). Raises ConfigError."""
    raw, text = read_text(path, display=display, max_bytes=max_bytes)
    return raw, parse_document(text, display, path.suffix)


def has_magic(pattern: str) -> bool:
    return glob.has_magic(pattern)


MAX_GLOB_ENTRIES = 200_000  # folder entries one case glob may look at


class GlobError(ValueError):
    """A glob that cannot be expanded safely; the message says why and what to do."""


def expand_glob(base: Path, pattern: str, *, limit: int = MAX_GLOB_ENTRIES) -> list[Path]:
    """The regular files ``pattern`` (relative to ``base``; ``**`` recurses, hidden names need a leading ``.``)
    matches, sorted. Raises GlobError when the walk would look at more than ``limit`` entries."""
    return sorted(path for path, _linked in glob_matches(base, pattern, limit=limit))


def glob_matches(base: Path, pattern: str, *, limit: int = MAX_GLOB_ENTRIES) -> list[tuple[Path, bool]]:
    """``expand_glob``'s files, unsorted, each with whether the walk went through a symbolic link to reach it
    (the file itself or a folder a single wildcard matched): only those can lead out of the folder the literal
    part of the pattern names, so only they need ``outside``'s path resolution."""
    full = pattern if os.path.isabs(pattern) else os.path.join(base, pattern)
    parts = full.replace(os.sep, "/").split("/")
    root = parts[0] or "/"
    start = 1
    while start < len(parts) and not has_magic(parts[start]):  # the literal folders before the first wildcard
        root = f"{root}/{parts[start]}" if root != "/" else f"/{parts[start]}"
        start += 1
    seen = [0]
    if start == len(parts):  # no wildcard: the path itself, when it is a regular file
        return [(Path(root), os.path.islink(root))] if _regular(root) else []
    found = _expand(root, parts[start:], False, seen, limit)
    return [(Path(p), linked) for p, linked in dict.fromkeys(found)]


def _expand(
    folder: str, segments: list[str], linked: bool, seen: list[int], limit: int
) -> list[tuple[str, bool]]:
    segment, rest = segments[0], segments[1:]
    if not has_magic(segment):
        path = os.path.join(folder, segment)
        if not rest:
            return [(path, linked or os.path.islink(path))] if _regular(path) else []
        return _expand(path, rest, linked or os.path.islink(path), seen, limit) if os.path.isdir(path) else []
    out: list[tuple[str, bool]] = []
    if segment == "**" and rest:
        out += _expand(folder, rest, linked, seen, limit)  # zero folders
    matcher = _segment(segment).match
    for entry in _scan(folder, seen, limit):
        if entry.name.startswith(".") and not segment.startswith("."):
            continue  # like glob: a wildcard does not match a hidden name
        if segment == "**":
            if entry.is_dir(follow_symlinks=False):  # never through a link: no loops, no walk off the project
                out += _expand(entry.path, segments, linked, seen, limit)
            elif not rest and entry.is_file():
                out.append((entry.path, linked or entry.is_symlink()))
        elif matcher(entry.name):
            if not rest:
                if entry.is_file():  # a regular file, or a link to one (d_type: no extra system call)
                    out.append((entry.path, linked or entry.is_symlink()))
            elif entry.is_dir():
                out += _expand(entry.path, rest, linked or entry.is_symlink(), seen, limit)
    return out


def _scan(folder: str, seen: list[int], limit: int) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            found = list(entries)
    except OSError:
        return []
    seen[0] += len(found)
    if seen[0] > limit:
        raise GlobError(
            f"looks at more than {limit:,} files and folders; narrow it (name the folder it needs)"
        )
    return found


@lru_cache(maxsize=256)
def _segment(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def _regular(path: str) -> bool:
    """A regular file (or a link to one): never a folder, FIFO, socket or device."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def project_root(config_path: Path) -> Path:
    """The project a config belongs to: the repository holding it (the nearest folder with ``.git`` above it),
    else its own folder."""
    folder = Path(os.path.abspath(config_path)).parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def outside(path: Path, root: Path) -> bool:
    """True when ``path``, with every symbolic link followed, lies outside ``root``."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real != top and not real.startswith(top.rstrip(os.sep) + os.sep)

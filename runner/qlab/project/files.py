"""Finding and reading the files a project names: qlab.yaml, case globs, referenced files.

Paths inside qlab.yaml are relative to its folder (:func:`resolve`). Messages show paths relative to the
working directory when the file is below it (:func:`display_path`), so they are clickable in a terminal and in
CI logs; models keep paths relative to the config folder (stable across machines).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from qlab.errors import InputError
from qlab.project.document import Document
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


def read_document(path: Path, *, display: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, Document]:
    """Read and parse a file (``read_text`` guards, then :func:`parse_document`). Raises ConfigError."""
    raw, text = read_text(path, display=display, max_bytes=max_bytes)
    return raw, parse_document(text, display, path.suffix)


def has_magic(pattern: str) -> bool:
    return glob.has_magic(pattern)


def expand_glob(base: Path, pattern: str) -> list[Path]:
    """The files ``pattern`` (relative to ``base``; ``**`` recurses) matches, sorted, folders left out."""
    full = pattern if os.path.isabs(pattern) else str(base / pattern)
    return sorted(Path(p) for p in glob.glob(full, recursive=True) if os.path.isfile(p))

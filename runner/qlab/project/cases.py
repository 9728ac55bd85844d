"""Case files: which files each suite's globs match, and reading one file into validated Cases.

A case file holds one case (a mapping), a list of cases (YAML or JSON), or one case per line (JSON Lines).
Each case is validated against ``case.schema.json#/definitions/case`` on its own, so a bad case does not hide
the problems of the others, then built and checked (``semantic_cases``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab.errors import ConfigError, Diagnostic
from qlab.project import messages, schemas
from qlab.project.build_case import build_case
from qlab.project.document import Document, JsonPath
from qlab.project.files import (
    CASE_SUFFIXES,
    GlobError,
    display_path,
    expand_glob,
    glob_matches,
    has_magic,
    outside,
    project_relative,
    project_root,
    read_document,
)
from qlab.project.model import Case, Config, Origin, Suite
from qlab.project.semantic_cases import check_case


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A case file that was read: its path relative to the config folder, sha256 of its bytes, its case count."""

    path: str
    digest: str
    count: int


@dataclass(slots=True)
class CaseSet:
    """What reading case files produced (mutable while loading)."""

    entries: list[tuple[Case, Document, JsonPath]] = field(default_factory=list)
    ids: list[tuple[str, Document, JsonPath]] = field(
        default_factory=list
    )  # every id written, valid case or not
    files: list[CaseFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _pattern_path(suite_data: Any, name: str, index: int) -> JsonPath:
    cases = suite_data.get("cases") if isinstance(suite_data, dict) else None
    return ("suites", name, "cases") if isinstance(cases, str) else ("suites", name, "cases", index)


def discover(
    suites: Mapping[str, Suite], doc: Document, base: Path, *, config_path: Path | None = None
) -> tuple[dict[Path, Suite], list[Diagnostic]]:
    """Each case file matched by a suite's globs, with its suite, in suite and file order. qlab.yaml itself is
    never a case file, even when a glob such as ``*.yaml`` matches it.

    Errors: a pattern that matches no file (a suite would silently lose its cases and its gate pass as
    "skipped"), a pattern or a file outside the project (``../../etc/passwd``, a symbolic link out of it; the
    file is never read), a path that is not a regular file (a FIFO would hang the reader), and a glob that
    would look at too much of the disk."""
    owners: dict[Path, Suite] = {}
    out: list[Diagnostic] = []
    root = project_root(config_path or base / "qlab.yaml")
    for name, suite in suites.items():
        suite_data = (doc.data.get("suites") or {}).get(name)
        for index, pattern in enumerate(suite.cases):
            where = _pattern_path(suite_data, name, index)
            if outside(_literal_part(base, pattern), root):
                out.append(doc.diagnostic(where, f"{pattern!r} points outside the project ({display_path(root)}): "
                                          "case files must be inside it"))  # fmt: skip
                continue
            try:
                found = sorted(glob_matches(base, pattern))
            except GlobError as exc:
                out.append(doc.diagnostic(where, f"{pattern!r} {exc}"))
                continue
            matches = [(m, linked) for m, linked in found if config_path is None or m != config_path]
            if not matches:
                out.append(doc.diagnostic(where, _no_match(base, pattern)))
                continue
            for match, linked in matches:
                if linked and outside(match, root):  # only a link can lead out of the checked folder
                    out.append(doc.diagnostic(where, f"{display_path(match)} is a link to a file outside the project "
                                              f"({display_path(root)}): case files must be inside it"))  # fmt: skip
                    continue
                if has_magic(pattern) and match.suffix.lower() not in CASE_SUFFIXES:
                    out.append(doc.diagnostic(where, f"{display_path(match)} is not a .yaml, .yml, .json or .jsonl "
                                              "file: skipped", severity="warning"))  # fmt: skip
                    continue
                owner = owners.get(match)
                if owner is not None and owner.name != name:
                    out.append(doc.diagnostic(where, f"{display_path(match)} is already a case file of suite "
                                              f"{owner.name!r}; a case file belongs to one suite"))  # fmt: skip
                    continue
                owners[match] = suite
    return owners, out


def _literal_part(base: Path, pattern: str) -> Path:
    """The folders of ``pattern`` before its first wildcard (the whole path when it has none)."""
    parts = Path(pattern).parts
    literal = [p for p in parts[: next((i for i, p in enumerate(parts) if has_magic(p)), len(parts))]]
    return base.joinpath(*literal) if literal else base


def _no_match(base: Path, pattern: str) -> str:
    if has_magic(pattern):
        return (
            f"{pattern!r} matches no case file: the suite would run without these cases; fix the pattern or "
            "remove it"
        )
    path = base / pattern
    if path.exists() and not path.is_dir():
        return f"case file {pattern} is not a regular file (a FIFO, a socket or a device): qlab reads plain files"
    return f"case file {pattern} does not exist"


def attribute(files: Sequence[Path], suites: Mapping[str, Suite], base: Path) -> dict[Path, Suite | None]:
    """The suite of each explicitly named case file (the first suite whose globs match it), or None."""
    matched: dict[Path, Suite] = {}
    for suite in suites.values():
        for pattern in suite.cases:
            for match in expand_glob(base, pattern):
                matched.setdefault(match.resolve(), suite)
    return {f: matched.get(f.resolve()) for f in files}


def _items(doc: Document) -> list[tuple[JsonPath, Any]] | None:
    if isinstance(doc.data, dict):
        return [((), doc.data)]
    if isinstance(doc.data, list):
        return [((index,), item) for index, item in enumerate(doc.data)]
    return None


CASE_POSITION_DEPTH = 3  # (index, "assertions", i): what a valid case's origins need


def load_file(path: Path, suite: Suite | None, *, base: Path, config: Config | None, into: CaseSet) -> None:
    """Read one case file into ``into``: cases, the CaseFile record, and every diagnostic."""
    display = display_path(path)
    try:
        # a case's own position, its fields' and its assertions' are kept; a deeper path is found on demand
        raw, doc = read_document(path, display=display, position_depth=CASE_POSITION_DEPTH)
    except ConfigError as exc:
        into.diagnostics.extend(exc.diagnostics)
        return
    items = _items(doc)
    if items is None:
        message = f"expected a case (a mapping) or a list of cases, got {messages.describe(doc.data)}"
        into.diagnostics.append(doc.diagnostic((), message))
        return
    if not items:
        into.diagnostics.append(doc.diagnostic((), "the file holds no cases", severity="warning"))
    rel = project_relative(path, base)
    count = 0
    for at, data in items:
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            into.ids.append((data["id"], doc, at))
        issues = schemas.validate_case(data, prefix=at)
        own_suite = suite or Suite("", data.get("mode", "search") if isinstance(data, dict) else "search", ())
        if issues:
            into.diagnostics.extend(messages.diagnostics(issues, doc))
            if isinstance(data, dict):
                into.diagnostics.extend(
                    check_case(None, data, doc=doc, at=at, suite=own_suite, config=config)
                )
            continue
        line, col = doc.locate(at)
        origins = [
            Origin(rel, *doc.locate((*at, "assertions", i))) for i in range(len(data.get("assertions", [])))
        ]
        case = build_case(
            data, suite=own_suite, file=rel, origin=Origin(rel, line, col), assertion_origins=origins
        )
        into.diagnostics.extend(check_case(case, data, doc=doc, at=at, suite=own_suite, config=config))
        into.entries.append((case, doc, at))
        count += 1
    into.files.append(CaseFile(rel, hashlib.sha256(raw).hexdigest(), count))

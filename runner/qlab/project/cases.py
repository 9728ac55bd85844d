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
    display_path,
    expand_glob,
    has_magic,
    project_relative,
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
    never a case file, even when a glob such as ``*.yaml`` matches it."""
    owners: dict[Path, Suite] = {}
    out: list[Diagnostic] = []
    for name, suite in suites.items():
        suite_data = (doc.data.get("suites") or {}).get(name)
        for index, pattern in enumerate(suite.cases):
            where = _pattern_path(suite_data, name, index)
            matches = [m for m in expand_glob(base, pattern) if config_path is None or m != config_path]
            if not matches:
                if has_magic(pattern):
                    out.append(doc.diagnostic(where, f"{pattern!r} matches no file", severity="warning"))
                else:
                    out.append(doc.diagnostic(where, f"case file {pattern} does not exist"))
                continue
            for match in matches:
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


def load_file(path: Path, suite: Suite | None, *, base: Path, config: Config | None, into: CaseSet) -> None:
    """Read one case file into ``into``: cases, the CaseFile record, and every diagnostic."""
    display = display_path(path)
    try:
        raw, doc = read_document(path, display=display)
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

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

from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project import messages, schemas
from qlab.project.build_case import build_case
from qlab.project.document import Document, JsonPath, Position
from qlab.project.files import (
    CASE_SUFFIXES,
    GlobError,
    display_path,
    expand_glob,
    glob_matches,
    has_magic,
    outside,
    parse_document,
    parse_items,
    project_relative,
    project_root,
)
from qlab.project.model import Case, Config, Origin, Suite
from qlab.project.semantic_cases import check_case
from qlab.project.textio import read_text


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A case file that was read: its path relative to the config folder, sha256 of its bytes, its case count."""

    path: str
    digest: str
    count: int


class _Source:
    """A case file's text, kept while the project loads, so that where a case's id was written can be found
    again when a later case uses the same id: the file is parsed again with every position, once, on that
    first need. Positions are never kept per case (they cost more than the cases)."""

    __slots__ = ("_at", "_doc", "display", "suffix", "text")

    def __init__(self, text: str, display: str, suffix: str) -> None:
        self.text, self.display, self.suffix = text, display, suffix
        self._doc: Document | None = None
        self._at: dict[Position, JsonPath] | None = None

    def where_id(self, first: Case | JsonPath) -> str:
        """``file:line:col`` of the id of ``first``: a case built from this file, or a case's path in it."""
        if self._doc is None:
            self._doc = parse_document(self.text, self.display, self.suffix)
        doc = self._doc
        if isinstance(first, Case):  # the case's own position tells which item it is
            if self._at is None:
                data = doc.data
                paths: list[JsonPath] = [(i,) for i in range(len(data))] if isinstance(data, list) else [()]
                self._at = {doc.locate(at): at for at in paths}
            first = self._at[(first.origin.line, first.origin.col)]
        line, col = doc.locate((*first, "id"))
        return f"{doc.file}:{line}:{col}"


@dataclass(slots=True)
class CaseSet:
    """What reading case files produced (mutable while loading)."""

    cases: list[Case] = field(default_factory=list)
    files: list[CaseFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # every id written, valid case or not: where it was first written (the case, or its file and path)
    first_ids: dict[str, Case | tuple[_Source, JsonPath]] = field(default_factory=dict)
    sources: dict[str, _Source] = field(default_factory=dict)  # by Case.file

    def where_id(self, case_id: str) -> str:
        first = self.first_ids[case_id]
        if isinstance(first, Case):
            return self.sources[first.file].where_id(first)
        source, at = first
        return source.where_id(at)


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


def load_file(path: Path, suite: Suite | None, *, base: Path, config: Config | None, into: CaseSet) -> None:
    """Read one case file into ``into``: its cases, the CaseFile record, and every diagnostic. A file that is
    not valid YAML / JSON contributes its syntax problems only (nothing of it is kept, its ids included)."""
    display = display_path(path)
    rel = project_relative(path, base)
    cases: list[Case] = []
    found: list[Diagnostic] = []
    new_ids: list[str] = []
    record = True
    try:
        raw, text = read_text(path, display=display)
        digest = hashlib.sha256(raw).hexdigest()
        del raw
        source = into.sources[rel] = _Source(text, display, path.suffix)
        for at, data, doc in parse_items(text, display, path.suffix):
            if not at and not isinstance(data, dict):
                if isinstance(data, list):  # an empty list
                    found.append(doc.diagnostic((), "the file holds no cases", severity="warning"))
                else:
                    message = f"expected a case (a mapping) or a list of cases, got {messages.describe(data)}"
                    found.append(doc.diagnostic((), message))
                    record = False
                continue
            case = _read_case(data, doc, at, suite=suite, rel=rel, config=config, found=found)
            if case is not None:
                cases.append(case)
            case_id = data.get("id") if isinstance(data, dict) else None
            if isinstance(case_id, str):
                if case_id in into.first_ids:
                    message = f"duplicate case id {case_id!r}: also used at {into.where_id(case_id)}"
                    found.append(doc.diagnostic((*at, "id"), message))
                else:
                    into.first_ids[case_id] = case if case is not None else (source, at)
                    new_ids.append(case_id)
    except ConfigError as exc:
        for case_id in new_ids:
            del into.first_ids[case_id]
        into.sources.pop(rel, None)
        into.diagnostics.extend(exc.diagnostics)
        return
    into.diagnostics.extend(found)
    if record:
        into.cases.extend(cases)
        into.files.append(CaseFile(rel, digest, len(cases)))


def _read_case(
    data: Any,
    doc: Document,
    at: JsonPath,
    *,
    suite: Suite | None,
    rel: str,
    config: Config | None,
    found: list[Diagnostic],
) -> Case | None:
    """The Case of one item (None when it fails the case schema); its problems are added to ``found``."""
    issues = schemas.validate_case(data, prefix=at)
    own_suite = suite or Suite("", data.get("mode", "search") if isinstance(data, dict) else "search", ())
    if issues:
        found.extend(messages.diagnostics(issues, doc))
        if isinstance(data, dict):
            found.extend(check_case(None, data, doc=doc, at=at, suite=own_suite, config=config))
        return None
    line, col = doc.locate(at)
    origins = [
        Origin(rel, *doc.locate((*at, "assertions", i))) for i in range(len(data.get("assertions", [])))
    ]
    case = build_case(
        data, suite=own_suite, file=rel, origin=Origin(rel, line, col), assertion_origins=origins
    )
    found.extend(check_case(case, data, doc=doc, at=at, suite=own_suite, config=config))
    return case

"""Files qlab.yaml refers to besides case files: collection sources, the reviewed aliases file and the release
trigger / golden case files. A missing file is an error at the key that names it; the aliases and release files
are also read and validated against their definitions in ``case.schema.json``."""

from __future__ import annotations

from pathlib import Path

from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project import messages, schemas
from qlab.project.document import Document, JsonPath
from qlab.project.files import display_path, read_document, resolve
from qlab.project.model import Config


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def _missing(doc: Document, path: JsonPath, file: Path, what: str) -> Diagnostic:
    return doc.diagnostic(path, f"{what} {display_path(file)} does not exist")


def _validated(file: Path, definition: str) -> list[Diagnostic]:
    """Read ``file`` and validate it against ``definition``; every problem as a located diagnostic."""
    try:
        _, document = read_document(file, display=display_path(file))
    except ConfigError as exc:
        return list(exc.diagnostics)
    out = messages.diagnostics(schemas.validate(document.data, "case", definition=definition), document)
    if definition == "golden_cases" and not out:
        seen: set[str] = set()
        for index, item in enumerate(document.data):
            if item["id"] in seen:
                out.append(document.diagnostic((index, "id"), f"duplicate golden case id {item['id']!r}"))
            seen.add(item["id"])
    return out


def check_references(config: Config, doc: Document) -> list[Diagnostic]:
    """Diagnostics for every referenced file that is missing or invalid."""
    out: list[Diagnostic] = []
    for index, source in enumerate(config.collection.sources):
        if (
            source.location is None
            or (source.kind != "mcp" and _is_url(source.location))
            or source.kind == "python"
        ):
            continue
        raw = doc.data["collection"]["sources"][index][source.kind]
        path: JsonPath = ("collection", "sources", index, source.kind)
        if isinstance(raw, dict):
            path = (*path, "tools_file")
        file = resolve(config, source.location)
        if not file.is_file():
            out.append(_missing(doc, path, file, f"{source.kind} source"))
    if config.collection.aliases_file:
        file = resolve(config, config.collection.aliases_file)
        if file.is_file():
            out.extend(_validated(file, "aliases"))
        else:
            out.append(_missing(doc, ("collection", "aliases"), file, "aliases file"))
    for name, skill in config.release.items():
        for key, definition in (("trigger_cases", "trigger_cases"), ("golden_cases", "golden_cases")):
            location = getattr(skill, key)
            if location is None:
                continue
            file = resolve(config, location)
            if file.is_file():
                out.extend(_validated(file, definition))
            else:
                out.append(_missing(doc, ("release", name, key), file, key.replace("_", " ") + " file"))
    return out

"""Generated documentation: pages derived from the code and schemas they describe, so they cannot drift.

``python -m qlab.docs NAME`` prints one page; ``--write DIR`` writes them all, ``--check DIR`` exits 1 when one
drifted (a test runs it); ``--schemas schemas`` adds the generated parts of the shipped schemas (``SCHEMAS``).

==============  ======================  =========================================
name            file                    source of truth
==============  ======================  =========================================
config          ``config.md``           ``schemas/qlab.schema.json``
cases           ``cases.md``            ``schemas/case.schema.json`` (+ examples)
reasons         ``reasons.md``          ``qlab.contracts.reasons.REASONS``
exit-codes      ``exit-codes.md``       ``qlab.contracts.errors``
metrics         ``metrics.md``          ``qlab.contracts.metrics.METRICS``
==============  ======================  =========================================
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

# name -> (file name under docs/, module exposing ``generate() -> str``); imported on use
PAGES: dict[str, tuple[str, str]] = {
    "config": ("config.md", "qlab.docs.config_doc"),
    "cases": ("cases.md", "qlab.docs.cases_doc"),
    "reasons": ("reasons.md", "qlab.docs.reasons_doc"),
    "exit-codes": ("exit-codes.md", "qlab.docs.exit_codes_doc"),
    "metrics": ("metrics.md", "qlab.docs.metrics_doc"),
}


def generate(name: str) -> str:
    """The Markdown of page ``name`` (a key of ``PAGES``)."""
    if name not in PAGES:
        raise KeyError(f"unknown page {name!r}; known: {', '.join(PAGES)}")
    text: str = importlib.import_module(PAGES[name][1]).generate()
    return text


def drifted(folder: Path) -> list[str]:
    """File names under ``folder`` whose content differs from the generator's output (missing counts)."""
    out: list[str] = []
    for name, (file_name, _) in PAGES.items():
        path = folder / file_name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != generate(name):
            out.append(file_name)
    return out


def write_all(folder: Path) -> list[Path]:
    """Write every page into ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (file_name, _) in PAGES.items():
        path = folder / file_name
        path.write_text(generate(name), encoding="utf-8")
        written.append(path)
    return written


# file name under schemas/ -> module exposing ``generate(current) -> str`` (the file with its generated parts)
SCHEMAS: dict[str, str] = {"case.schema.json": "qlab.docs.case_schema"}


def generate_schema(folder: Path, file_name: str) -> str:
    """The text ``folder/file_name`` should have: its generated parts made again from the code."""
    current = json.loads((folder / file_name).read_text(encoding="utf-8"))
    text: str = importlib.import_module(SCHEMAS[file_name]).generate(current)
    return text


def schemas_drifted(folder: Path) -> list[str]:
    """Schema files under ``folder`` whose generated parts differ from what the code generates now."""
    return [
        name
        for name in SCHEMAS
        if (folder / name).read_text(encoding="utf-8") != generate_schema(folder, name)
    ]


def write_schemas(folder: Path) -> list[Path]:
    """Write the generated parts of every schema in ``folder``; returns the paths written."""
    written = []
    for name in SCHEMAS:
        text = generate_schema(folder, name)
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    return written

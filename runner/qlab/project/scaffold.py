"""``qlab init``'s library half: the files of a new project, written without clobbering anything.

- :func:`demo_files`: the demo project (a copy of the repository's qlab.yaml and gates/, shipped as package
  data in ``qlab/project/scaffold/``), the demo OpenAPI document and the two JSON Schemas the modelines point
  at. A freshly initialised folder passes ``qlab validate``.
- :func:`openapi_files`: a starter project for your own OpenAPI / Swagger document: one search case per
  operation, phrased from its summary (seed 000's "search cases from real OpenAPI summaries").
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.errors import InputError
from qlab.resources import demo_asset, package_files, schema_path

CASES_MODELINE = "# yaml-language-server: $schema=../../schemas/case.schema.json\n"


def _schemas() -> dict[str, bytes]:
    return {
        f"schemas/{schema_path(name).name}": schema_path(name).read_bytes() for name in ("config", "case")
    }


def demo_files() -> dict[str, bytes]:
    """Relative path -> content of the demo project."""
    files = package_files("qlab.project", "scaffold")
    if "qlab.yaml" not in files:
        raise InputError("the demo scaffold is missing from this qlab installation; reinstall qlab")
    return {**files, "openapi.yaml": demo_asset("openapi.yaml"), **_schemas()}


def _words(name: str) -> str:
    """``getMemberDeliveryList`` / ``get_member`` -> ``get member delivery list``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    return " ".join(spaced.lower().split())


def _query(summary: str, description: str, name: str) -> str:
    if summary.strip():
        return summary.strip()
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0].strip()
    return first or _words(name)


def _yaml_scalar(text: str) -> str:
    """A double-quoted YAML scalar (JSON string syntax is valid YAML)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def openapi_files(spec: Path, tools: Sequence[Any], *, target: Path, kind: str) -> dict[str, bytes]:
    """Relative path -> content of a starter project for ``spec`` with its ``tools`` (collection Tools)."""
    try:
        location = Path(os.path.relpath(spec.resolve(), target.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        location = spec.resolve().as_posix()
    project = re.sub(r"[^A-Za-z0-9_.-]+", "-", target.resolve().name).strip("-") or "api"
    config = f"""# yaml-language-server: $schema=schemas/qlab.schema.json
# Created by `qlab init --from-openapi {spec.name}`. Start here: run `qlab validate`, then `qlab run`.
# Add plan and execute suites (see the demo: `qlab init demo-project`) once search is stable.
version: 1
project: {project}

collection:
  sources:
    - name: api
      {kind}: {_yaml_scalar(location)}

suites:
  search_core:
    mode: search
    cases: [gates/search_core/*.yaml]
    category: flow
    cadence: every_search_change
    k: 5

gates:
  - name: build
    stage: build
    stop_if:
      - schema_coverage_below: 0.8
  - name: search
    stage: search
    suites: [search_core]
    thresholds:
      hit_at_k: ">= 0.9"
      top_1: ">= 0.7"
"""
    lines = [CASES_MODELINE, f"# One search case per operation of {spec.name}, phrased from its summary.\n",
             "# Rewrite the queries the way your users ask; keep expected_target.\n"]  # fmt: skip
    for number, tool in enumerate(tools, start=1):
        lines.append(f"- id: search-core-{number:03d}\n")
        lines.append(f"  query: {_yaml_scalar(_query(tool.summary, tool.description, tool.name))}\n")
        lines.append(f"  expected_target: {_yaml_scalar(tool.id)}\n")
        if tool.family:
            lines.append(f"  tags: [{_yaml_scalar(tool.family)}]\n")
    return {
        "qlab.yaml": config.encode("utf-8"),
        "gates/search_core/operations.yaml": "".join(lines).encode("utf-8"),
        **_schemas(),
    }


def write_files(target: Path, files: Mapping[str, bytes], *, force: bool) -> list[Path]:
    """Write ``files`` under ``target``. Without ``force``, refuses (InputError, nothing written) when any of
    them exists already. Returns the written paths, in order."""
    existing = [rel for rel in files if (target / rel).exists()]
    if existing and not force:
        shown = ", ".join(existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
        raise InputError(
            f"{target}: would overwrite {shown}; pass --force to overwrite, or choose another folder"
        )
    written = []
    for rel, content in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written

"""The starter's case files: a search case per operation, and read-only execute cases for safe GETs.

An execute case is written only for an operation qlab can call without inventing anything: a GET whose
required inputs all have a ``default`` in the spec (those defaults become ``provided_entities``). At most
``MAX_READS`` are written, in document order: a smoke suite, not a crawl of the API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.collection.model import MutationClass, Tool
from qlab.project.starter.queries import queries

CASES_MODELINE = "# yaml-language-server: $schema=../../schemas/case.schema.json\n"
SEARCH_FILE = "gates/search_core/operations.yaml"
READS_FILE = "gates/execute_read/reads.yaml"
ALIASES_FILE = "gates/aliases.yaml"
MAX_READS = 20


def scalar(value: Any) -> str:
    """A YAML flow scalar (JSON syntax is valid YAML): strings double-quoted, numbers and booleans bare."""
    return json.dumps(value, ensure_ascii=False)


def safe_reads(tools: Sequence[Tool], *, limit: int = MAX_READS) -> list[tuple[Tool, dict[str, Any]]]:
    """(tool, the spec's defaults for its required inputs) of the GETs callable without invented inputs."""
    out: list[tuple[Tool, dict[str, Any]]] = []
    for tool in tools:
        if tool.method != "GET" or tool.mutation is not MutationClass.READ_ONLY:
            continue
        required = tool.required_parameters
        if any("default" not in p.schema for p in required):
            continue
        out.append((tool, {p.name: p.schema["default"] for p in required}))
        if len(out) == limit:
            break
    return out


def search_cases(tools: Sequence[Tool], *, spec_label: str) -> str:
    """The search suite's case file: one case per operation."""
    asked = queries(tools)
    lines = [
        CASES_MODELINE,
        f"# One search case per operation of {spec_label}, phrased from its summary (or description). Operations\n",
        "# that say the same thing also name their method and path. Rewrite the queries the way your users ask;\n",
        "# keep expected_target.\n",
    ]
    for number, tool in enumerate(tools, start=1):
        lines.append(f"- id: search-core-{number:03d}\n")
        lines.append(f"  query: {scalar(asked[tool.id])}\n")
        lines.append(f"  expected_target: {scalar(tool.id)}\n")
        if tool.family:
            lines.append(f"  tags: [{scalar(tool.family)}]\n")
    return "".join(lines)


def read_cases(reads: Sequence[tuple[Tool, Mapping[str, Any]]], *, tools: Sequence[Tool], found: int) -> str:
    """The execute_read suite's case file (``found``: how many operations qualified before the cap)."""
    asked = queries(tools)
    more = f" (the first {len(reads)} of {found})" if found > len(reads) else ""
    lines = [
        CASES_MODELINE,
        f"# Read-only execute cases{more}: GET operations qlab can call without inventing an input (required\n",
        "# inputs with a `default` in the spec use it). Each runs search → select → plan → one request against\n",
        "# the suite's environment; add assertions on what the response must say (json_path_equals, ...).\n",
    ]
    for number, (tool, entities) in enumerate(reads, start=1):
        lines.append(f"- id: execute-read-{number:03d}\n")
        lines.append(f"  query: {scalar(asked[tool.id])}\n")
        lines.append(f"  expected_target: {scalar(tool.id)}\n")
        if entities:
            given = ", ".join(f"{scalar(k)}: {scalar(v)}" for k, v in entities.items())
            lines.append(f"  provided_entities: {{{given}}}\n")
        lines.append("  mutation_safety: read_only\n")
        lines.append("  assertions:\n    - {type: http_status, range: 2xx}\n")
        if tool.family:
            lines.append(f"  tags: [{scalar(tool.family)}]\n")
    return "".join(lines)


def aliases_file(spec_label: str) -> str:
    """An empty reviewed-aliases file, with what it is for."""
    return (
        "# yaml-language-server: $schema=../schemas/case.schema.json#/definitions/aliases\n"
        f"# Reviewed aliases of the operations of {spec_label}: {{tool_id: [alias, ...]}}.\n"
        "#\n"
        "# Add the words your users really use for an operation when a search case shows the spec's own words are\n"
        "# not enough, e.g.  get_uuid: [random id, unique identifier]\n"
        "# Changing this file is an `alias_or_semantic_metadata` change: check it with `qlab promote` (see\n"
        "# qlab.yaml's promotion rules) before it is merged.\n"
        "{}\n"
    )

"""The starter's case files: a search case per operation, and read-only execute cases for safe GETs.

An execute case is written only for an operation qlab can call without inventing anything: a GET whose
required inputs all have a ``default`` in the spec (those defaults become ``provided_entities``). At most
``MAX_READS`` are written, in document order: a smoke suite, not a crawl of the API.

Each file is data written by the YAML emitter (``qlab.project.annotated``): the spec's words are values,
never YAML syntax, and the comments name the spec only through ``comment_text``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.collection.model import MutationClass, Tool
from qlab.project.annotated import Annotated, render
from qlab.project.starter.queries import queries

CASES_MODELINE = "yaml-language-server: $schema=../../schemas/case.schema.json"
SEARCH_FILE = "gates/search_core/operations.yaml"
READS_FILE = "gates/execute_read/reads.yaml"
ALIASES_FILE = "gates/aliases.yaml"
MAX_READS = 20


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


def _tagged(case: dict[str, Any], tool: Tool) -> dict[str, Any]:
    return {**case, "tags": [tool.family]} if tool.family else case


def search_cases(tools: Sequence[Tool], *, spec_label: str) -> str:
    """The search suite's case file: one case per operation."""
    asked = queries(tools)
    cases = [
        _tagged({"id": f"search-core-{n:03d}", "query": asked[tool.id], "expected_target": tool.id}, tool)
        for n, tool in enumerate(tools, start=1)
    ]
    about = (
        f"One search case per operation of {spec_label}, phrased from its summary (or description). Operations "
        "that say the same thing also name their method and path. Rewrite the queries the way your users ask; "
        "keep expected_target."
    )
    return _case_file(cases, about, file=SEARCH_FILE)


def _case_file(cases: list[dict[str, Any]], about: str, *, file: str) -> str:
    """A case file: the schema modeline, what the cases are (wrapped to comment lines), the cases."""
    return render(Annotated(cases, header=(CASES_MODELINE, *textwrap.wrap(about, 104))), file=file)


def read_assertions(tool: Tool) -> list[dict[str, Any]]:
    """What a read case checks of the response: the status codes the spec documents for success (any 2xx
    when it names none), and, when a success response documents a body, the documented response
    (``response_schema``: a JSON body against its schema, another body's content type against the
    documented ones)."""
    success = [s for s in tool.responses if s.upper() == "2XX" or (s.isdigit() and 200 <= int(s) < 300)]
    codes = sorted(int(s) for s in success if s.isdigit())
    status: dict[str, Any] = {"type": "http_status", **({"in": codes} if codes else {"range": "2xx"})}
    bodies = any(tool.response_media.get(s) for s in success)
    return [status, {"type": "response_schema"}] if bodies else [status]


def read_cases(reads: Sequence[tuple[Tool, Mapping[str, Any]]], *, tools: Sequence[Tool], found: int) -> str:
    """The execute_read suite's case file (``found``: how many operations qualified before the cap)."""
    asked = queries(tools)
    more = f" (the first {len(reads)} of {found})" if found > len(reads) else ""
    cases = []
    for number, (tool, entities) in enumerate(reads, start=1):
        case: dict[str, Any] = {"id": f"execute-read-{number:03d}", "query": asked[tool.id],
                                "expected_target": tool.id}  # fmt: skip
        if entities:
            case["provided_entities"] = dict(entities)
        case["mutation_safety"] = "read_only"
        case["assertions"] = read_assertions(tool)
        cases.append(_tagged(case, tool))
    about = (
        f"Read-only execute cases{more}: GET operations qlab can call without inventing an input (required "
        "inputs with a `default` in the spec use it). Each runs search → select → plan → one request against "
        "the suite's environment and checks the documented response; add assertions on what the response must "
        "say (json_path_equals, ...)."
    )
    return _case_file(cases, about, file=READS_FILE)


def aliases_file(spec_label: str) -> str:
    """An empty reviewed-aliases file, with what it is for."""
    header = (
        "yaml-language-server: $schema=../schemas/case.schema.json#/definitions/aliases",
        f"Reviewed aliases of the operations of {spec_label}: {{tool_id: [alias, ...]}}.",
        "",
        "Add the words your users really use for an operation when a search case shows the spec's own words are",
        "not enough, e.g.  get_uuid: [random id, unique identifier]",
        "Changing this file is an `alias_or_semantic_metadata` change: check it with `qlab promote` (see",
        "qlab.yaml's promotion rules) before it is merged.",
    )
    return render(Annotated({}, header=header), file=ALIASES_FILE)

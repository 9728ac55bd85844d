"""``qlab validate``'s check of the tool names cases write against the collection they will run on.

A case names tools in ``expected_target``, ``expected_plan_tools``, the ``tool``/``tools``/``equals`` of its
search, select and plan assertions, and its cleanup steps. A name the collection does not have can never
match: ``get_uid`` for ``get_uuid`` would only show up at ``qlab run`` as ``expected_target_unknown``.

The check builds the collection (through the build cache, as ``qlab run`` does) only when every source is a local
file: an OpenAPI / Swagger file or a saved MCP ``tools/list``. A URL is not fetched, a live MCP server not
started and a Python module not imported just to validate: ``ToolNames.skipped`` then says which source
kept the check from running, and ``qlab run`` still reports unknown names when it builds the collection.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection import skill_bindings
from qlab.collection.builder import build_collection
from qlab.collection.documents import is_url
from qlab.collection.model import Collection
from qlab.contracts.errors import ConfigError, Diagnostic, InputError, SpecError
from qlab.project.document import JsonPath
from qlab.project.files import display_path, read_document
from qlab.project.model import Case, Config

# assertion type -> the keys that hold one tool name, or a list of them
_ASSERTION_TOOLS: Mapping[str, tuple[str, ...]] = {
    "top_k_contains": ("tool",),
    "top_1_is": ("tool",),
    "plan_contains_tool": ("tool",),
    "selected_target": ("equals",),
    "plan_tools_equal": ("tools",),
}


@dataclass(frozen=True, slots=True)
class ToolNames:
    """The outcome: ``diagnostics`` (one error per unknown name), how many tools the names were checked
    against, or ``skipped`` (why they were not checked)."""

    diagnostics: tuple[Diagnostic, ...] = ()
    tools: int = 0
    skipped: str = ""
    names: int = 0  # how many tool names the cases write
    unknown: tuple[str, ...] = field(default_factory=tuple)


def named_tools(case: Case) -> Iterator[tuple[JsonPath, str]]:
    """Every tool name ``case`` writes, with its path inside the case."""
    raw: Mapping[str, Any] = case.raw
    if isinstance(raw.get("expected_target"), str):
        yield ("expected_target",), raw["expected_target"]
    yield from _list(raw.get("expected_plan_tools"), ("expected_plan_tools",))
    for index, item in enumerate(raw.get("assertions") or ()):
        if not isinstance(item, Mapping):
            continue
        for key in _ASSERTION_TOOLS.get(str(item.get("type")), ()):
            value = item.get(key)
            if isinstance(value, str):
                yield ("assertions", index, key), value
            else:
                yield from _list(value, ("assertions", index, key))
    for index, step in enumerate(raw.get("cleanup") or ()):
        if isinstance(step, Mapping) and isinstance(step.get("tool"), str):
            yield ("cleanup", index, "tool"), step["tool"]


def _list(value: Any, at: JsonPath) -> Iterator[tuple[JsonPath, str]]:
    if isinstance(value, list):
        for index, name in enumerate(value):
            if isinstance(name, str):
                yield (*at, index), name


def not_local(config: Config) -> str:
    """Why the collection's tools cannot be known without fetching, starting or importing something ("" when
    every source is a local file)."""
    for source in config.collection.sources:
        where = f"source {source.name!r}"
        if source.kind in ("openapi", "swagger") and source.location and is_url(source.location):
            return f"{where} is a URL, which validate does not fetch"
        if source.kind == "mcp" and not source.location:
            return f"{where} is a live MCP server, which validate does not start"
        if source.kind == "python":
            return f"{where} is a Python module, which validate does not import"
    return ""


def check_tool_names(config: Config, cases: Sequence[Case]) -> ToolNames:
    """Check every tool name of ``cases`` against the collection of ``config``; see the module docstring. The
    release skills' bindings are checked on the same collection (``qlab.collection.skill_bindings``)."""
    written = [(case, at, name) for case in cases for at, name in named_tools(case)]
    if not written and not config.release:
        return ToolNames()
    why = not_local(config)
    if why:
        return ToolNames(skipped=why, names=len(written))
    try:
        collection = _build(config)
    except SpecError as exc:
        return ToolNames(skipped=f"the collection could not be built: {exc}", names=len(written))
    ids = [tool.id for tool in collection.tools]
    known = set(ids)
    unknown = [(case, at, name) for case, at, name in written if name not in known]
    base = Path(config.path).parent
    diagnostics = [
        _diagnostic(case, at, f"{name!r} is not a tool of the collection.{did_you_mean(name, ids)}", base)
        for case, at, name in unknown
    ]
    diagnostics += skill_bindings.check(config, collection)
    return ToolNames(
        diagnostics=tuple(sorted(diagnostics)),
        tools=len(ids),
        names=len(written),
        unknown=tuple(dict.fromkeys(name for _c, _a, name in unknown)),
    )


def _build(config: Config) -> Collection:
    """The collection, through the build cache as ``qlab run`` would (and so warming it for the run); without
    the cache when its folder cannot be written (a read-only checkout must still validate)."""
    try:
        return build_collection(config, use_cache=True).collection
    except SpecError:
        raise
    except (OSError, InputError):
        return build_collection(config, use_cache=False).collection


def _diagnostic(case: Case, at: JsonPath, message: str, base: Path) -> Diagnostic:
    """Located at the name itself: the case file is read again (only when a name is unknown) and the case found
    by the position it was loaded from; at the case when that fails."""
    path = base / case.file
    fallback = Diagnostic(display_path(path), case.origin.line, case.origin.col, "", message)
    try:
        _raw, doc = read_document(path, display=display_path(path))
    except ConfigError:
        return fallback
    data = doc.data
    entries: list[JsonPath] = [()] if isinstance(data, dict) else [(i,) for i in range(len(data or ()))]
    for entry in entries:
        if doc.locate(entry) == (case.origin.line, case.origin.col):
            return doc.diagnostic((*entry, *at), message)
    return fallback

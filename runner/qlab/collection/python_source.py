"""Python callables → Tools (the ``python`` collection source).

``location`` is ``module`` (its public functions, in source order) or ``module:attr``, where ``attr`` (dotted)
is a function, a list/tuple of callables, a dict ``{tool name: callable}``, a class (its public methods, as
``Class.method``) or an instance. qlab.yaml's folder is on ``sys.path`` while importing, in ``qlab build`` and
in ``qlab run``'s pre-run check (``module_problem``) alike.

Each callable becomes a Tool: parameters from the signature (``self``/``cls``, ``*args``, ``**kwargs`` left
out) with JSON Schemas from the type hints (``pytypes``) and descriptions from the docstring (``docstrings``);
the summary is the docstring's first line; the return annotation is the ``result`` response. The mutation
class: ``mutation_of``.

The snapshot digest covers the module's own source file and the location, not the modules it imports.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection import docstrings, documents, pytypes
from qlab.collection.model import MutationClass, Parameter, Tool
from qlab.collection.names import tokens
from qlab.collection.schemas import example_of
from qlab.collection.sources import Snapshot, SourceTools
from qlab.contracts.errors import SpecError
from qlab.project.model import Source

_READ_VERBS = frozenset(
    {
        "get",
        "list",
        "find",
        "search",
        "read",
        "fetch",
        "lookup",
        "query",
        "show",
        "describe",
        "count",
        "check",
        "is",
        "has",
        "load",
        "view",
        "track",
        "browse",
        "retrieve",
    }
)
_DESTRUCTIVE_VERBS = frozenset(
    {"delete", "remove", "destroy", "drop", "purge", "erase", "wipe", "cancel", "revoke"}
)
_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def _split(location: str) -> tuple[str, str | None]:
    module, _, attr = location.partition(":")
    return module.strip(), (attr.strip() or None)


def _module_file(source: Source, module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        raise SpecError(f"source {source.name!r}: cannot find module {module!r}: {exc}") from None
    if spec is None:
        raise SpecError(
            f"source {source.name!r}: no module named {module!r}; is it importable from the folder of qlab.yaml?"
        )
    origin = spec.origin
    return (
        Path(origin) if origin and origin not in ("built-in", "frozen") and Path(origin).is_file() else None
    )


def module_problem(location: str, *, base_dir: Path) -> str | None:
    """Why the module of ``location`` (``module`` or ``module:attr``) cannot be found, looked up exactly as the
    build imports it (``base_dir``, qlab.yaml's folder, first on ``sys.path``); None when it can be."""
    module, _attr = _split(location)
    if not module:
        return "no module named: write `module` or `module:attr`"
    with _importable_from(base_dir):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
    if found:
        return None
    return (
        f"Python module {module!r} cannot be imported from {base_dir} (the folder of qlab.yaml) nor from the "
        "installed packages; is it installed, or named relative to that folder?"
    )


def callables(
    source: Source, target: Any, *, attr: str | None, module: Any
) -> list[tuple[str, str, Callable[..., Any], bool]]:
    """(tool name, family, function, skip first parameter) for everything ``target`` offers."""
    if attr is None:
        found = [
            (name, obj)
            for name, obj in vars(module).items()
            if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")
        ]
        found.sort(key=lambda item: item[1].__code__.co_firstlineno)
        return [(name, module.__name__, fn, False) for name, fn in found]
    if inspect.isclass(target):
        return _methods(target)
    if inspect.isfunction(target) or inspect.isbuiltin(target) or inspect.ismethod(target):
        return [(target.__name__, module.__name__, target, False)]
    if isinstance(target, Mapping):
        out = []
        for name, fn in target.items():
            if not callable(fn):
                raise SpecError(f"source {source.name!r}: {attr}[{name!r}] is not callable")
            out.append((str(name), module.__name__, fn, False))
        return out
    if isinstance(target, (list, tuple)):
        out = []
        for i, fn in enumerate(target):
            if not callable(fn):
                raise SpecError(f"source {source.name!r}: {attr}[{i}] is not callable")
            out.append((getattr(fn, "__name__", f"{attr}_{i}"), module.__name__, fn, False))
        return out
    if callable(target):
        return [(attr.rsplit(".", 1)[-1], module.__name__, target, False)]
    return [
        (f"{type(target).__name__}.{name}", type(target).__name__, getattr(target, name), False)
        for name, _fn, _skip in _public_members(type(target))
    ]


def _methods(cls: type) -> list[tuple[str, str, Callable[..., Any], bool]]:
    return [(f"{cls.__name__}.{name}", cls.__name__, fn, skip) for name, fn, skip in _public_members(cls)]


def _public_members(cls: type) -> list[tuple[str, Callable[..., Any], bool]]:
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, staticmethod):
            out.append((name, member.__func__, False))
        elif isinstance(member, classmethod):
            out.append((name, member.__func__, True))
        elif inspect.isfunction(member):
            out.append((name, member, True))
    return out


def mutation_of(name: str, fn: Any) -> MutationClass:
    """The callable's ``qlab_mutation`` attribute when set, else from the first word of its name: a read verb
    (``_READ_VERBS``) → read_only, a destructive one (``_DESTRUCTIVE_VERBS``) → destructive, else mutating."""
    declared = getattr(fn, "qlab_mutation", None)
    if isinstance(declared, str) and declared in {m.value for m in MutationClass}:
        return MutationClass(declared)
    words = tokens(name.rsplit(".", 1)[-1])
    verb = words[0] if words else ""
    if verb in _READ_VERBS:
        return MutationClass.READ_ONLY
    if verb in _DESTRUCTIVE_VERBS:
        return MutationClass.DESTRUCTIVE
    return MutationClass.MUTATING


def to_tool(name: str, family: str, fn: Callable[..., Any], *, skip_first: bool, source: str) -> Tool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"source {source!r}: cannot read the signature of {name}: {exc}") from None
    hints = pytypes.hints_of(fn)
    doc = docstrings.parse(inspect.getdoc(fn))
    params, examples = [], {}
    for i, (pname, p) in enumerate(signature.parameters.items()):
        if (skip_first and i == 0) or p.kind in _SKIPPED_KINDS:
            continue
        annotation = hints.get(pname, p.annotation)
        schema = {} if annotation is inspect.Parameter.empty else pytypes.schema_for(annotation)
        description = doc.params.get(pname) or str(schema.get("description") or "")
        if p.default is not inspect.Parameter.empty and _jsonable(p.default):
            schema = {**schema, "default": p.default}
        params.append(
            Parameter(pname, "argument", p.default is inspect.Parameter.empty, schema, description.strip())
        )
        found, value = example_of(schema)
        if found:
            examples[pname] = value
    responses: dict[str, Mapping[str, Any]] = {}
    returns = hints.get("return", signature.return_annotation)
    if returns not in (inspect.Signature.empty, None, type(None)):
        responses["result"] = pytypes.schema_for(returns)
    mutation = mutation_of(name, fn)
    return Tool(
        id=name,
        name=name,
        family=family,
        source=source,
        kind="python",
        summary=doc.summary,
        description=doc.description,
        parameters=tuple(params),
        responses=responses,
        mutation=mutation,
        examples=examples,
        idempotent=True if mutation is MutationClass.READ_ONLY else None,
    )


def _jsonable(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class PythonSource:
    """The ``python`` source kind: ``location`` is ``module`` or ``module:attr``."""

    def snapshot(self, source: Source, *, base_dir: Path) -> Snapshot:
        if not source.location:
            raise SpecError(f"source {source.name!r}: `python` needs `module` or `module:attr`")
        module, _attr = _split(source.location)
        with _importable_from(base_dir):
            path = _module_file(source, module)
        raw = path.read_bytes() if path is not None else b""
        digest = documents.sha256(raw + b"\0" + source.location.encode("utf-8"))
        return Snapshot(source=source, digest=digest, payload=base_dir)

    def tools(self, snapshot: Snapshot) -> SourceTools:
        source = snapshot.source
        module_name, attr = _split(source.location or "")
        with _importable_from(snapshot.payload):
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:  # user code: any failure to import is a source error
                raise SpecError(
                    f"source {source.name!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
                ) from None
        target: Any = module
        if attr is not None:
            for part in attr.split("."):
                if not hasattr(target, part):
                    choices = [n for n in dir(target) if not n.startswith("_")]
                    raise SpecError(
                        f"source {source.name!r}: {module_name!r} has no attribute {attr!r}."
                        f"{did_you_mean(part, choices)}"
                    )
                target = getattr(target, part)
        found = callables(source, target, attr=attr, module=module)
        if not found:
            raise SpecError(f"source {source.name!r}: {source.location!r} offers no public callables")
        tools = [to_tool(n, fam, fn, skip_first=skip, source=source.name) for n, fam, fn, skip in found]
        return SourceTools(tools=tuple(tools), info={"module": module_name, "attr": attr or ""})


SOURCE = PythonSource()

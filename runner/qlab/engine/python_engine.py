"""The ``python`` engine: ``engine.object: module:attr`` names a team's engine written in Python.

``attr`` is either an object with ``search``, ``select`` and ``plan`` (the ``qlab.engine.base.Engine``
protocol), or a factory (a class or a function) that takes the ``Collection`` and returns one. The module is
imported with the folder of qlab.yaml first on ``sys.path``. Its methods may return qlab's own types or plain
dicts in the shape of ``schemas/engine-response.schema.json``; a dict is checked like an http engine's reply.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from qlab.adapters import fuzzy
from qlab.collection.model import Collection
from qlab.contracts.errors import InputError
from qlab.engine import wire
from qlab.engine.types import Plan, SearchResult, Selection

_METHODS = ("search", "select", "plan")
T = TypeVar("T")


def load_object(spec: str, *, base_dir: Path) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted) with ``base_dir`` importable."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"engine.object: {spec!r} is not 'module:attr' (for example 'my_engine:Engine')")
    folder = str(base_dir)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"engine.object: cannot import module {module_name!r}: {exc}") from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            raise InputError(f"engine.object: {spec!r}: {part!r} not found.{fuzzy.did_you_mean(part, names)}")
        target = getattr(target, part)
    return target


def _is_engine(value: Any) -> bool:
    return not isinstance(value, type) and all(callable(getattr(value, m, None)) for m in _METHODS)


class PythonEngine:
    """Wraps a team's engine object; checks what it returns."""

    def __init__(self, target: Any, *, spec: str) -> None:
        self.target = target
        self.spec = spec
        self.name = str(getattr(target, "name", spec))

    def search(self, query: str, *, k: int) -> SearchResult:
        value = self.target.search(query, k=k)
        return _coerce(value, SearchResult, wire.search_from_dict, f"engine {self.spec}.search")

    def select(
        self,
        query: str,
        result: SearchResult,
        *,
        entities: Mapping[str, Any],
        llm_target: str | None,
    ) -> Selection:
        value = self.target.select(query, result, entities=entities, llm_target=llm_target)
        return _coerce(value, Selection, wire.selection_from_dict, f"engine {self.spec}.select")

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        value = self.target.plan(query, target, entities=entities)
        return _coerce(value, Plan, wire.plan_from_dict, f"engine {self.spec}.plan")

    def close(self) -> None:
        close = getattr(self.target, "close", None)
        if callable(close):
            close()


def _coerce(value: Any, kind: type[T], parse: Callable[..., T], where: str) -> T:
    if isinstance(value, kind):
        return value
    if isinstance(value, Mapping):
        return parse(value, where=f"{where} reply")
    raise InputError(f"{where} reply: $: expected a {kind.__name__} or a dict, got {type(value).__name__}")


def make_python_engine(spec: str, collection: Collection, *, base_dir: Path) -> PythonEngine:
    """Load ``spec`` and, when it is a factory, call it with ``collection``."""
    found = load_object(spec, base_dir=base_dir)
    if not _is_engine(found):
        if not callable(found):
            raise InputError(
                f"engine.object: {spec!r} is neither an engine (search, select, plan) nor a factory"
            )
        try:
            found = found(collection)
        except Exception as exc:  # a team's factory: report it, don't crash the run
            raise InputError(f"engine.object: {spec!r} raised {type(exc).__name__}: {exc}") from None
        if not _is_engine(found):
            missing = [m for m in _METHODS if not callable(getattr(found, m, None))]
            raise InputError(f"engine.object: {spec!r} returned an object without {', '.join(missing)}")
    return PythonEngine(found, spec=spec)

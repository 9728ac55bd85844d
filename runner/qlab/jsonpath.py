"""jsonpath-ng, behind one module. Expressions are compiled once and cached (parsing costs ~185 µs).

Most paths in case files are plain field chains (``$.data``, ``$.data.memberNo``). Those are answered here
without jsonpath-ng, whose import alone costs ~40 ms of every ``qlab run`` (its parser tables): a field chain
selects exactly what jsonpath-ng selects (``tests/test_jsonpath.py`` compares the two on generated documents).
Anything else — brackets, wildcards, filters, recursive descent — goes to jsonpath-ng, imported on first use.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Protocol

from qlab.errors import InputError

# ``$`` then ``.name`` parts, names as jsonpath-ng's lexer reads an identifier, minus its operator words
_CHAIN = re.compile(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_OPERATOR_WORDS = frozenset({"where", "wherenot", "when", "and", "or", "not", "in", "true", "false", "null"})


class _Compiled(Protocol):
    def find(self, document: Any) -> list[Any]: ...


class _Chain:
    """A field chain: each step reads one key of a mapping (jsonpath-ng's ``Fields`` on a dict)."""

    __slots__ = ("fields",)

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields

    def find(self, document: Any) -> list[Any]:
        value = document
        for name in self.fields:
            if not isinstance(value, dict) or name not in value:
                return []
            value = value[name]
        return [value]


class _Library:
    """A jsonpath-ng expression; ``find`` gives the values, as ``_Chain`` does."""

    __slots__ = ("path",)

    def __init__(self, path: Any) -> None:
        self.path = path

    def find(self, document: Any) -> list[Any]:
        return [match.value for match in self.path.find(document)]


def _chain(expression: str) -> _Chain | None:
    if _CHAIN.fullmatch(expression) is None:
        return None
    fields = tuple(expression.split(".")[1:])
    if any(name in _OPERATOR_WORDS for name in fields):
        return None
    return _Chain(fields)


@lru_cache(maxsize=4096)
def compile_path(expression: str) -> _Compiled:
    """Compile ``expression`` (``$.data[0].id``, filters allowed) or raise InputError saying what is wrong."""
    chain = _chain(expression)
    if chain is not None:
        return chain
    return _Library(_parse(expression))


def _parse(expression: str) -> Any:
    from jsonpath_ng.ext.parser import parse  # ~40 ms of imports: only for paths that need the library

    try:
        return parse(expression)
    except Exception as exc:  # the parser raises JsonPathLexerError, JsonPathParserError and bare Exceptions
        raise InputError(f"invalid JSONPath {expression!r}: {exc}") from None


def find(expression: str, document: Any) -> list[Any]:
    """Every value ``expression`` selects in ``document`` (empty when none)."""
    return compile_path(expression).find(document)


def first(expression: str, document: Any, default: Any = None) -> Any:
    values = find(expression, document)
    return values[0] if values else default


def exists(expression: str, document: Any) -> bool:
    return bool(compile_path(expression).find(document))


def is_valid(expression: str) -> bool:
    try:
        compile_path(expression)
    except InputError:
        return False
    return True

"""jsonpath-ng, behind one module: each expression is compiled once (cached), and jsonpath-ng is imported on the
first expression a run meets.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from qlab.contracts.errors import InputError


class Path:
    """A compiled JSONPath expression; ``find`` gives the values it selects."""

    __slots__ = ("path",)

    def __init__(self, path: Any) -> None:
        self.path = path

    def find(self, document: Any) -> list[Any]:
        return [match.value for match in self.path.find(document)]


@lru_cache(maxsize=4096)
def compile_path(expression: str) -> Path:
    """Compile ``expression`` (``$.data[0].id``, filters allowed) or raise InputError saying what is wrong."""
    from jsonpath_ng.ext.parser import parse

    try:
        return Path(parse(expression))
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

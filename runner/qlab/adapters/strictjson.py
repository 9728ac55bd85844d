"""JSON from outside (responses, engine and LLM replies, specs), read strictly: what ``json`` reads but no
strict JSON or UTF-8 writer can give back (``NaN``, ``Infinity``, ``1e999999``, a lone ``"\\ud800"``) is refused
by name (``NotStrictJSON``), so a result file is never the first to find out."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# an escaped surrogate (\ud800-\udfff), or one encoded raw in UTF-8 (json reads bytes with surrogatepass)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


class NotStrictJSON(ValueError):
    """Text ``json`` reads but strict JSON does not allow, or that cannot be written back as UTF-8."""


def _constant(name: str) -> Any:
    raise NotStrictJSON(f"it holds {name}, which JSON does not allow")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotStrictJSON(f"it holds the number {text[:40]}, too large for a double")
    return value


def json_of(data: bytes | str) -> Any:
    """The JSON value of a body read from outside, strictly: Python's ``json`` also reads ``NaN``,
    ``Infinity``, numbers beyond a double (``1e999999``) and lone UTF-16 surrogates (``"\\ud800"``), none of
    which can be written back as strict JSON or UTF-8 (the result file).

    Raises ``ValueError``: ``NotStrictJSON`` for the forms above, ``json``'s own for text that is not JSON,
    ``UnicodeDecodeError`` for bytes that are not text; ``RecursionError`` for nesting deeper than the
    interpreter allows."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    value = json.loads(raw, parse_constant=_constant, parse_float=_float)
    if _SURROGATE.search(raw):
        where = _surrogate_at(value, "$")
        if where is not None:
            raise NotStrictJSON(f"{where} holds a lone UTF-16 surrogate, which is not text")
    return value


def _surrogate_at(value: Any, path: str) -> str | None:
    """The JSON path of the first string (or key) holding a lone surrogate, else None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if _lone(node):
                return where
        elif isinstance(node, dict):
            for key, item in node.items():
                if _lone(key):
                    return f"{where} (a key)"
                stack.append((item, f"{where}.{key[:40]}"))
        elif isinstance(node, list):
            stack.extend((item, f"{where}[{index}]") for index, item in enumerate(node))
    return None


def _lone(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False

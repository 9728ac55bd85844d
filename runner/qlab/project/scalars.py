"""Plain (unquoted) YAML scalars resolved with the YAML 1.2 core schema, as editors resolve them.

Only ``true``/``false`` (any case style of the spec) are booleans and only ``null``/``~``/empty is null, so
``no``, ``on``, ``1:30`` and ``2024-01-01`` stay strings (YAML 1.1 would turn them into False, True, 90 and a
date). Numbers follow the core schema: ``0o17`` and ``0x1f`` are integers, ``.inf`` and ``.nan`` floats.
"""

from __future__ import annotations

import math
import re
from typing import Any

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUES = frozenset({"true", "True", "TRUE"})
_FALSES = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"([-+]?)\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")


def plain_scalar(value: str) -> Any:
    """Resolve a plain (unquoted) scalar with the YAML 1.2 core schema."""
    if value in _NULLS:
        return None
    if value in _TRUES:
        return True
    if value in _FALSES:
        return False
    first = value[0]
    if first.isdigit() or first in "-+.":
        if _INT.match(value):
            return int(value)
        if _FLOAT.match(value):
            return float(value)
        inf = _INF.match(value)
        if inf:
            return -math.inf if inf.group(1) == "-" else math.inf
        if _NAN.match(value):
            return math.nan
        if _OCT.match(value):
            return int(value[2:], 8)
        if _HEX.match(value):
            return int(value[2:], 16)
    return value

"""Plain (unquoted) YAML scalars resolved with the YAML 1.2 core schema, as editors resolve them.

Only ``true``/``false`` (any case style of the spec) are booleans and only ``null``/``~``/empty is null, so
``no``, ``on``, ``1:30`` and ``2024-01-01`` stay strings (YAML 1.1 would turn them into False, True, 90 and a
date). Numbers follow the core schema: ``0o17`` and ``0x1f`` are integers, ``.inf`` and ``.nan`` floats.

qlab's files hold JSON data, so a number must be one JSON can carry and every reader can use:
``number_problem`` refuses ``.nan``, ``.inf``, a float beyond ±1.8e308 (which reads as infinity) and an integer
beyond 64 bits (``10**400`` would overflow the first float it meets). The YAML and JSON readers report it at the
number's line and column, before any schema or check sees it.
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
MAX_INT = 2**63 - 1
_MAX_DIGITS = 30  # longer digit strings are out of range whatever they say (and int() refuses > 4,300 digits)


def number_problem(value: Any, text: str | None = None) -> str | None:
    """Why ``value`` (a parsed number, written as ``text``) is not a usable number, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    shown = text if text is None or len(text) <= 24 else f"{text[:20]}… ({len(text)} characters)"
    written = f"{shown!r} " if shown is not None else ""
    too_long = text is not None and _INT.match(text) is not None and len(text) > _MAX_DIGITS
    if isinstance(value, float) and not math.isfinite(value) and not too_long:
        return (
            f"the number {written}is not finite: qlab reads finite numbers only (.nan, .inf and values beyond "
            "±1.8e308 are refused); quote it if it is text"
        )
    if too_long or (isinstance(value, int) and abs(value) > MAX_INT):
        return (
            f"the number {written}is out of range: integers must lie within ±{MAX_INT:,} (64 bits); quote it "
            "if it is text"
        )
    return None


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
            # a longer digit string is out of range however it reads: infinity says so without int()'s cost
            if len(value) > _MAX_DIGITS:
                return -math.inf if value[0] == "-" else math.inf
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

"""A small block-style YAML writer for plain data (the case files and aliases governance writes).

Plain data only: dicts with string keys, lists, str, int, float, bool, None. A string is written plain when it
reads back as the same string under YAML 1.2's core schema (and YAML 1.1's booleans), else JSON-quoted (a JSON
string is a valid YAML double-quoted scalar). Empty collections are written in flow style (``{}``, ``[]``).
Every file written this way parses back with ``qlab.project.yamlio.parse_yaml`` to the same data (tested).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9 _./-]*[A-Za-z0-9_.]|[A-Za-z_]")
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})


def scalar(value: Any) -> str:
    """One scalar as YAML text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED and "  " not in text:
        return text
    # JSON escaping covers quotes, backslashes and C0 controls; YAML also refuses DEL, C1 controls, lone
    # surrogates and U+FFFE/U+FFFF, and reads NEL and U+2028/9 as line breaks: those become \uXXXX escapes
    return _UNPRINTABLE.sub(_escape, json.dumps(text, ensure_ascii=False))


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dump(data: Any) -> str:
    """``data`` as a block-style YAML document (ends with a newline)."""
    return (
        "".join(_lines(data, 0))
        if isinstance(data, (Mapping, list)) and data
        else scalar_or_empty(data) + "\n"
    )


def scalar_or_empty(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)


def _lines(data: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(value, (Mapping, list)) and value:
                out.append(f"{pad}{scalar(str(key))}:\n")
                out += _lines(value, indent + 2)
            else:
                out.append(f"{pad}{scalar(str(key))}: {scalar_or_empty(value)}\n")
        return out
    for item in data:
        if isinstance(item, (Mapping, list)) and item:
            nested = _lines(item, indent + 2)
            # the first line of a nested block goes on the dash's line
            out.append(f"{pad}- {nested[0].lstrip()}")
            out += nested[1:]
        else:
            out.append(f"{pad}- {scalar_or_empty(item)}\n")
    return out

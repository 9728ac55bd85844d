"""A parsed file: plain data (dicts, lists, str, int, float, bool, None) plus where each value was written.

The YAML and JSON readers (``yamlio``, ``jsonio``) both produce a :class:`Document`, so schema messages and
semantic checks locate a JSON path the same way whatever the file format. Positions are 1-based
``(line, col)``; a path not recorded (inside an aliased YAML value, or a key that is missing) falls back to
its nearest recorded ancestor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from qlab.contracts.errors import Diagnostic

PathKey = str | int
JsonPath = tuple[PathKey, ...]
Position = tuple[int, int]

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def format_path(path: Sequence[PathKey]) -> str:
    """``('suites', 'x-y', 'cases', 0)`` -> ``$.suites['x-y'].cases[0]`` (JSONPath, as the messages print it)."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}")
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"['{escaped}']")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Document:
    """One file's data with the positions of its values (``values``) and of its mapping keys (``keys``)."""

    file: str  # the path as shown to the user (relative to the working directory where possible)
    data: Any
    values: Mapping[JsonPath, Position] = field(default_factory=dict)
    keys: Mapping[JsonPath, Position] = field(default_factory=dict)

    def locate(self, path: Sequence[PathKey], *, prefer_key: bool = False) -> Position:
        """Where ``path`` was written. ``prefer_key`` points at the mapping key (``mode:``) rather than the value:
        the right place for "missing key" and "unknown key" messages."""
        target = tuple(path)
        if prefer_key and target in self.keys:
            return self.keys[target]
        while True:
            if target in self.values:
                return self.values[target]
            if target in self.keys:
                return self.keys[target]
            if not target:
                return (1, 1)
            target = target[:-1]

    def diagnostic(
        self,
        path: Sequence[PathKey],
        message: str,
        *,
        prefer_key: bool = False,
        severity: Literal["error", "warning"] = "error",
    ) -> Diagnostic:
        """A located Diagnostic for ``path`` in this file."""
        line, col = self.locate(path, prefer_key=prefer_key)
        return Diagnostic(self.file, line, col, format_path(path), message, severity)

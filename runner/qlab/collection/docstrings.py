"""Docstrings → summary, description and per-parameter descriptions (Google, NumPy and reST styles).

- Google: an ``Args:`` / ``Arguments:`` / ``Parameters:`` / ``Keyword Args:`` section of ``name (type): text``
  lines, continuation lines indented deeper.
- NumPy: a ``Parameters`` header underlined with dashes, then ``name : type`` lines, the text indented below.
- reST: ``:param name: text`` or ``:param type name: text`` fields.

The summary is the first line; the description is what comes before the first section or field.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_GOOGLE_PARAMS = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):\s*$"
)
_GOOGLE_SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")
_NUMPY_UNDERLINE = re.compile(r"^-{3,}\s*$")
_NUMPY_PARAMS = frozenset({"Parameters", "Other Parameters", "Keyword Arguments"})
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*(?P<text>.*)$")
_REST_FIELD = re.compile(r"^:[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Docstring:
    summary: str = ""
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse(doc: str | None) -> Docstring:
    """Parse a raw ``__doc__`` (indentation is cleaned first)."""
    if not doc or not doc.strip():
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    summary = lines[0].strip()
    body = lines[1:]
    start = _first_section(body)
    description = "\n".join(body[:start]).strip()
    params: dict[str, str] = {}
    params.update(_google(body))
    params.update(_numpy(body))
    params.update(_rest(body))
    return Docstring(summary=summary, description=description, params=params)


def _first_section(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _GOOGLE_SECTION.match(stripped) and not line.startswith(" "):
            return i
        if _REST_FIELD.match(stripped):
            return i
        if i + 1 < len(lines) and stripped and _NUMPY_UNDERLINE.match(lines[i + 1].strip()):
            return i
    return len(lines)


def _google(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    in_section = False
    current: str | None = None
    entry_indent = -1
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if _GOOGLE_PARAMS.match(stripped) and indent == 0:
            in_section, current, entry_indent = True, None, -1
            continue
        if not in_section:
            continue
        if indent == 0 and stripped:  # the next section (or plain text) ends this one
            in_section = False
            continue
        if not stripped:
            continue
        match = _GOOGLE_ENTRY.match(stripped)
        if match and (entry_indent < 0 or indent <= entry_indent):
            entry_indent = indent
            current = match.group("name")
            out[current] = match.group("text").strip()
        elif current is not None:
            out[current] = f"{out[current]} {stripped}".strip()
    return out


def _numpy(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        if header in _NUMPY_PARAMS and i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1].strip()):
            i += 2
            current: str | None = None
            while i < len(lines):
                line = lines[i]
                stripped = line.strip()
                if i + 1 < len(lines) and stripped and _NUMPY_UNDERLINE.match(lines[i + 1].strip()):
                    break  # the next section
                indent = len(line) - len(line.lstrip())
                match = _NUMPY_ENTRY.match(stripped)
                if stripped and indent == 0 and match:
                    current = match.group("name")
                    out[current] = ""
                elif stripped and current is not None:
                    out[current] = f"{out[current]} {stripped}".strip()
                i += 1
            continue
        i += 1
    return out


def _rest(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        match = _REST_PARAM.match(stripped)
        if match:
            current = match.group("name")
            out[current] = match.group("text").strip()
        elif _REST_FIELD.match(stripped) or not stripped:
            current = None
        elif current is not None and line.startswith((" ", "\t")):
            out[current] = f"{out[current]} {stripped}".strip()
    return out

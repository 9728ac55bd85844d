"""How GitHub's runner reads what a step prints: the workflow commands it would obey in a text.

A model of actions/runner ``ActionCommandManager.TryProcessCommand`` for tests, stricter than the runner on
every point where they differ:

- a line ends at ``\\r\\n``, ``\\r`` or ``\\n`` (.NET's ``ReadLine``);
- the current form, ``::name props::data``, counts at the start of a line after white space (``TryParseV2``);
  the old form, ``##[name props]data``, anywhere in a line (``TryParse``); here both are looked for in every
  line (the runner stops at the first that parses);
- the runner finds ``::`` and ``##[`` with culture-aware comparisons, which pass over control and format
  characters: here every such character is removed before looking (``#\\u200b#[`` is ``##[``);
- any name counts, not only the commands the runner has registered.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# default-ignorable code points outside the Cc and Cf categories (Unicode's DerivedCoreProperties)
_IGNORABLE_EXTRA = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
_IGNORABLE_RANGES = ((0x180B, 0x180F), (0xFE00, 0xFE0F), (0xE0000, 0xE0FFF))


def skipped(char: str) -> bool:
    """A character a culture-aware .NET comparison may pass over."""
    if char in "\r\n":
        return False
    code = ord(char)
    return (
        unicodedata.category(char) in ("Cc", "Cf")
        or code in _IGNORABLE_EXTRA
        or any(low <= code <= high for low, high in _IGNORABLE_RANGES)
    )


@dataclass(frozen=True)
class Command:
    form: str  # "::" or "##["
    name: str
    properties: str
    data: str
    line: str


def commands(output: str) -> list[Command]:
    """Every workflow command the runner would obey in ``output``."""
    found = []
    for line in re.split(r"\r\n|\r|\n", output):
        seen = "".join(c for c in line if not skipped(c))
        current = seen.lstrip()
        end = current.find("::", 2)
        if current.startswith("::") and end >= 0:
            name, _, props = current[2:end].partition(" ")
            found.append(Command("::", name, props, current[end + 2 :], line))
        start = seen.find("##[")
        close = seen.find("]", start)
        if start >= 0 and close >= 0:
            name, _, props = seen[start + 3 : close].partition(" ")
            found.append(Command("##[", name, props, seen[close + 1 :], line))
    return found

"""YAML files with comments, for the files qlab writes for people to read and edit (``qlab init``).

The data goes through the emitter (:func:`qlab.project.yamlio.dump_yaml`); the comments are added after, by
:func:`render`, on the lines the emitter wrote, found by parsing its output: before an entry (``above``), at
the end of its first line (``beside``), after its last line (``below``), and at the top of the file
(``header``). Comment text is made inert first (:func:`comment_text`): a comment ends at the first line break,
so a line break of any kind (``\\n``, ``\\r``, U+0085, U+2028 …) or control character in it is written as an
escape, and a long text is cut. ``render`` then parses its own result and refuses (ValueError) a file whose
data is not exactly the data it was given: a comment can add no key and change no value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qlab.project.document import Document, JsonPath
from qlab.project.yamlio import dump_yaml, parse_yaml, unicode_text

MAX_COMMENT = 240  # characters of one comment line; outside text can be any length
_INERT = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # controls, format, line/paragraph separators


def comment_text(text: str, *, limit: int = MAX_COMMENT) -> str:
    """``text`` as one line of a comment: every control, format or separator character escaped (``\\n``,
    ``\\u2028``), cut to ``limit`` characters with an ellipsis."""
    out = []
    for char in text:
        if char == "\t" or unicodedata.category(char) not in _INERT:
            out.append(char)
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    line = "".join(out)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def commented_out(data: Any) -> list[str]:
    """``data`` as the emitter writes it, one string per line: YAML to show in comments (``below``)."""
    return dump_yaml(data).splitlines()


@dataclass(frozen=True, slots=True)
class Annotated:
    """Data and the comments around it. Paths are JSON paths into ``data`` (``("gates", 0, "name")``)."""

    data: Any
    header: Sequence[str] = ()
    above: Mapping[JsonPath, Sequence[str]] = field(default_factory=dict)
    beside: Mapping[JsonPath, str] = field(default_factory=dict)
    below: Mapping[JsonPath, Sequence[str]] = field(default_factory=dict)


def _line(doc: Document, path: JsonPath) -> int:
    """The 0-based line where the entry at ``path`` starts (its key, or the item of a list)."""
    where = doc.keys.get(path) or doc.values.get(path)
    if where is None:
        raise KeyError(f"no entry at {path!r} to comment")
    return where[0] - 1


def _last_line(doc: Document, path: JsonPath) -> int:
    """The 0-based last line of the entry at ``path``: no scalar spans lines (see ``dump_yaml``)."""
    size = len(path)
    lines = [pos[0] for table in (doc.keys, doc.values) for p, pos in table.items() if p[:size] == path]
    return max(lines) - 1


def render(annotated: Annotated, *, file: str = "<generated>") -> str:
    """The YAML text of ``annotated``; see the module docstring."""
    text = dump_yaml(annotated.data, file=file)
    doc = parse_yaml(text, file)
    lines = text.splitlines()
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    ends: dict[int, list[str]] = {}
    for path, notes in annotated.above.items():
        at = _line(doc, path)
        indent = _indent(lines[at])
        before.setdefault(at, []).extend(f"{indent}# {comment_text(n)}".rstrip() for n in notes)
    for path, notes in annotated.below.items():
        at = _last_line(doc, path)
        indent = _indent(lines[_line(doc, path)])
        after.setdefault(at, []).extend(f"{indent}# {comment_text(n)}".rstrip() for n in notes)
    for path, note in annotated.beside.items():
        ends.setdefault(_line(doc, path), []).append(comment_text(note))
    out = [f"# {comment_text(line)}".rstrip() for line in annotated.header]
    for number, line in enumerate(lines):
        out.extend(before.get(number, ()))
        end = ends.get(number)
        out.append(f"{line}  # {'; '.join(end)}" if end else line)
        out.extend(after.get(number, ()))
    result = "\n".join(out) + "\n"
    if parse_yaml(result, file).data != unicode_text(annotated.data):
        raise ValueError(f"{file}: a comment changed the data")
    return result


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" "))]

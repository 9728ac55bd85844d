"""JSON and JSON Lines text -> :class:`~qlab.project.document.Document` with positions.

The standard library's decoder gives no positions for values, so this is a small recursive-descent reader
that records ``(line, col)`` for every value and key, refuses duplicate keys and NaN/Infinity (not JSON), and
limits nesting. Strings are decoded by ``json.decoder.scanstring`` (C), so escapes behave exactly as in
``json.loads``.

JSON Lines files hold one case per line and may hold 100,000 of them: a line is first read by ``json.loads``
(C), refusing duplicate keys and NaN/Infinity and with fewer brackets than the nesting limit; a line it does not
take is read by the positional reader, which words the problem. Positions inside a line are found when a
message asks for one (:class:`_LinePositions`), by reading that line again.
"""

from __future__ import annotations

import bisect
import contextlib
import json.decoder
import math
import re
import sys
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project.document import Document, JsonPath, Position, format_path
from qlab.project.scalars import number_problem

MAX_DEPTH = 100

_WS = re.compile(r"[ \t\n\r]*")
_BLANKS = re.compile(r"[ \t\r]*")  # what a JSON Lines line may start with
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 - C-accelerated; not in the stubs
_NEWLINE = re.compile("\n")
_WORD = re.compile(r"[A-Za-z_]+")
_LITERALS = (("true", True), ("false", False), ("null", None))


class _Stop(Exception):
    def __init__(
        self, offset: int, message: str, path: JsonPath | None = None, *, syntax: bool = True
    ) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.path = path
        self.syntax = syntax  # False: valid JSON that qlab cannot use (an out-of-range number)


def _string_message(msg: str) -> str:
    if msg.startswith("Invalid control character"):
        return "a line break or control character inside a string: escape it (\\n, \\t)"
    if msg.startswith("Unterminated string"):
        return "unterminated string: a closing '\"' is missing"
    return msg.lower().replace("\\escape", "escape").rstrip(": ")


class _Reader:
    def __init__(self, text: str, *, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self.newlines = [m.start() for m in _NEWLINE.finditer(text)]
        self.values: dict[JsonPath, Position] = {}
        self.keys: dict[JsonPath, Position] = {}
        self.duplicates: list[tuple[int, JsonPath, str]] = []

    def position(self, offset: int) -> Position:
        line = bisect.bisect_left(self.newlines, offset)
        start = self.newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def skip(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        return match.end() if match else pos

    def expect_end(self, pos: int) -> None:
        pos = self.skip(pos)
        if pos < len(self.text):
            raise _Stop(
                pos,
                "unexpected text after the JSON value (one value per file; JSON Lines files end in .jsonl)",
            )

    def value(self, pos: int, path: JsonPath, depth: int) -> tuple[Any, int]:
        pos = self.skip(pos)
        if pos >= len(self.text):
            raise _Stop(pos, "unexpected end of file: expected a value")
        self.values[path] = self.position(pos)
        ch = self.text[pos]
        if ch == "{" or ch == "[":
            if depth >= self.max_depth:
                raise _Stop(pos, f"nesting is deeper than {self.max_depth} levels")
            return self.obj(pos, path, depth) if ch == "{" else self.arr(pos, path, depth)
        if ch == '"':
            return self.string(pos)
        number = _NUMBER.match(self.text, pos)
        if number:
            frac, exp = number.group(1), number.group(2)
            literal = number.group()
            if frac or exp:
                value: Any = float(literal)
            else:  # a longer digit string is out of range whatever it says (int() refuses > 4,300 digits)
                value = int(literal) if len(literal) <= 30 else float("inf")
            problem = number_problem(value, literal)
            if problem is not None:
                raise _Stop(pos, problem, path, syntax=False)
            return value, number.end()
        for word, result in _LITERALS:
            if self.text.startswith(word, pos):
                return result, pos + len(word)
        found = _WORD.match(self.text, pos)
        if found and found.group() in ("NaN", "Infinity", "True", "False", "None"):
            raise _Stop(pos, f"{found.group()} is not JSON (write a number, true, false or null)")
        raise _Stop(pos, f"expected a value, found {self.text[pos]!r}")

    def string(self, pos: int) -> tuple[str, int]:
        try:
            text, end = _scanstring(self.text, pos + 1, True)
        except json.JSONDecodeError as exc:
            raise _Stop(exc.pos, _string_message(exc.msg)) from None
        return text, end

    def obj(self, pos: int, path: JsonPath, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        pos = self.skip(pos + 1)
        if self.text.startswith("}", pos):
            return out, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                hint = " (JSON has no trailing commas)" if self.text.startswith("}", pos) else ""
                raise _Stop(pos, f"expected a key in double quotes{hint}")
            key_pos = pos
            key, pos = self.string(pos)
            pos = self.skip(pos)
            if not self.text.startswith(":", pos):
                raise _Stop(pos, "expected ':' after the key")
            child = (*path, key)
            duplicate = key in out
            if duplicate:
                self.duplicates.append((key_pos, child, key))
            else:
                self.keys[child] = self.position(key_pos)
            item, pos = self.value(pos + 1, child, depth + 1)
            if not duplicate:
                out[key] = item
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("}", pos):
                return out, pos + 1
            raise _Stop(pos, "expected ',' or '}' after an object entry")

    def arr(self, pos: int, path: JsonPath, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        pos = self.skip(pos + 1)
        if self.text.startswith("]", pos):
            return out, pos + 1
        while True:
            if self.text.startswith("]", pos) and out:
                raise _Stop(pos, "expected a value (JSON has no trailing commas)")
            item, pos = self.value(pos, (*path, len(out)), depth + 1)
            out.append(item)
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("]", pos):
                return out, pos + 1
            raise _Stop(pos, "expected ',' or ']' after a list item")

    def diagnostics(self, file: str, line_offset: int = 0, prefix: JsonPath = ()) -> list[Diagnostic]:
        out = []
        for offset, path, key in self.duplicates:
            line, col = self.position(offset)
            first = self.keys.get(path, (line, col))
            out.append(
                Diagnostic(
                    file,
                    line + line_offset,
                    col,
                    format_path((*prefix, *path)),
                    f"duplicate key {key!r} (first written at line {first[0] + line_offset}); "
                    "JSON readers keep only one of them, so remove or rename one",
                )
            )
        return out


def _stop_diagnostic(reader: _Reader, stop: _Stop, file: str, line_offset: int = 0) -> Diagnostic:
    line, col = reader.position(stop.offset)
    path = "" if stop.path is None else format_path(stop.path)
    return Diagnostic(
        file, line + line_offset, col, path, f"invalid JSON: {stop.message}" if stop.syntax else stop.message
    )


def parse_json(text: str, file: str, *, max_depth: int = MAX_DEPTH) -> Document:
    """Parse one JSON value. Raises ConfigError (a syntax error stops at the first; duplicate keys are all listed)."""
    reader = _Reader(text, max_depth=max_depth)
    try:
        data, end = reader.value(0, (), 0)
        reader.expect_end(end)
    except _Stop as stop:
        raise ConfigError([*reader.diagnostics(file), _stop_diagnostic(reader, stop, file)]) from None
    errors = reader.diagnostics(file)
    if errors:
        raise ConfigError(errors)
    return Document(file, data, reader.values, reader.keys)


class _NotPlain(Exception):
    """A line ``json.loads`` should not decide alone (a duplicate key, NaN): the positional reader reads it."""


def _constant(name: str) -> Any:
    raise _NotPlain(name)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: the positional reader reports it where it is
        raise _NotPlain(text)
    return value


def _int(text: str) -> int:
    value = int(text) if len(text) <= 30 else None
    if value is None or (len(text) > 18 and number_problem(value) is not None):
        raise _NotPlain(text)  # out of range: the positional reader reports it where it is
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # keys are interned: the cases share one "id", one "query", ... instead of a string each
    out = {sys.intern(key): value for key, value in pairs}
    if len(out) != len(pairs):
        raise _NotPlain("duplicate key")
    return out


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int
)


def _plain(line: str, max_depth: int) -> tuple[bool, Any]:
    """(True, value) when ``json.loads`` reads ``line`` as the positional reader would, else (False, None)."""
    if line.count("{") + line.count("[") >= max_depth:  # brackets inside strings count too: never too few
        return False, None
    try:
        return True, _DECODER.decode(line)
    except (_NotPlain, ValueError, RecursionError):
        return False, None


class _LinePositions(Mapping[JsonPath, Position]):
    """The value (or key) positions of a JSON Lines document, read on demand: ``(i, ...)`` is looked up by
    reading the i-th value's line with the positional reader (once, then kept); ``(i,)`` needs no reading."""

    def __init__(
        self, text: str, lines: array[int], starts: array[int], *, keys: bool, max_depth: int
    ) -> None:
        self.text, self.lines, self.starts = (
            text,
            lines,
            starts,
        )  # each value's 0-based line number and offset
        self.want_keys, self.max_depth = keys, max_depth
        self._read: dict[int, _Reader] = {}

    def _line(self, index: int) -> str:
        start = self.starts[index]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]

    def _reader(self, index: int) -> _Reader:
        if index not in self._read:
            reader = _Reader(self._line(index), max_depth=self.max_depth)
            with contextlib.suppress(_Stop):  # json.loads read the line, so this reader does too
                reader.value(0, (), 0)
            self._read[index] = reader
        return self._read[index]

    def __getitem__(self, path: JsonPath) -> Position:
        if not path:
            if self.want_keys:
                raise KeyError(path)
            return (1, 1)
        index = path[0]
        if not isinstance(index, int) or not 0 <= index < len(self.starts):
            raise KeyError(path)
        if len(path) == 1 and not self.want_keys:  # the line itself: where its first non-blank character is
            start = self.starts[index]
            return self.lines[index] + 1, _BLANKS.match(self.text, start).end() - start + 1  # type: ignore[union-attr]
        reader = self._reader(index)
        line_no, col = (reader.keys if self.want_keys else reader.values)[path[1:]]
        return line_no + self.lines[index], col

    def __contains__(self, path: object) -> bool:
        if (
            isinstance(path, tuple) and len(path) == 1 and not self.want_keys
        ):  # each case's own line: no reading
            return isinstance(path[0], int) and 0 <= path[0] < len(self.starts)
        try:
            self[path]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[JsonPath]:
        if not self.want_keys:
            yield ()
        for index in range(len(self.starts)):
            reader = self._reader(index)
            yield from ((index, *p) for p in (reader.keys if self.want_keys else reader.values))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def parse_jsonl(text: str, file: str, *, max_depth: int = MAX_DEPTH) -> Document:
    """Parse JSON Lines: one JSON value per non-blank line, as a list (``$[i]`` is the i-th value).

    Every line is read even after a bad one, so all broken lines are reported at once.
    """
    data: list[Any] = []
    lines, starts = array("q"), array("q")  # each value's line number and offset in ``text``
    errors: list[Diagnostic] = []
    offset = 0
    for number, line in enumerate(text.split("\n")):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        plain, item = _plain(line, max_depth)
        if not plain:
            reader = _Reader(line, max_depth=max_depth)
            try:
                item, end = reader.value(0, (), 0)
                reader.expect_end(end)
            except _Stop as stop:
                errors.extend(reader.diagnostics(file, number, (len(data),)))
                errors.append(_stop_diagnostic(reader, stop, file, number))
                data.append(None)
                continue
            errors.extend(reader.diagnostics(file, number, (len(data),)))
        data.append(item)
        lines.append(number)
        starts.append(start)
    if errors:
        raise ConfigError(errors)
    positions = {"max_depth": max_depth}
    return Document(file, data, _LinePositions(text, lines, starts, keys=False, **positions),
                    _LinePositions(text, lines, starts, keys=True, **positions))  # fmt: skip

"""Set one scalar key of one case in its file, editing the text: the case lifecycle (``status``) moves this way.

The file is not rewritten from data: the edit replaces (or inserts) a single token where the reader located it,
so comments, layout and the other cases stay exactly as they were. The key's value is replaced in place when
the case already has the key; otherwise ``key: value`` is added right after the case's ``id`` (a line of its
own in a block mapping, ``, key: value`` in a flow mapping or a JSON object). A trailing YAML comment can say
who made the change. The caller loads the project again afterwards and undoes the edit when it does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

from qlab.contracts.errors import InputError
from qlab.project.document import Document, JsonPath
from qlab.project.files import JSON_SUFFIXES, JSONL_SUFFIXES, display_path, read_document
from qlab.project.model import Case


def _entry(doc: Document, case: Case) -> JsonPath:
    """The case's path in its file: ``()`` for a one-case file, ``(i,)`` in a list (found by its position)."""
    data = doc.data
    entries: list[JsonPath] = [()] if isinstance(data, dict) else [(i,) for i in range(len(data or ()))]
    for entry in entries:
        node = data if not entry else data[entry[0]]
        if isinstance(node, dict) and node.get("id") == case.id:
            return entry
    raise InputError(f"{doc.file}: case {case.id!r} was not found in the file; was it moved?")


def _token_end(line: str, start: int, *, flow: bool) -> int:
    """Where the scalar starting at ``start`` ends: a quoted one at its closing quote, a plain one at the end of
    the line, a comment, or (in a flow mapping) the next ``,`` or ``}``."""
    if start < len(line) and line[start] in "\"'":
        quote = line[start]
        index = start + 1
        while index < len(line):
            if line[index] == "\\" and quote == '"':
                index += 2
                continue
            if line[index] == quote:
                if quote == "'" and line[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            index += 1
        return len(line)
    stops = [len(line)]
    for mark in (" #", *((",", "}") if flow else ())):
        found = line.find(mark, start)
        if found >= 0:
            stops.append(found)
    return min(stops)


def set_case_field(path: Path, case: Case, key: str, value: str, *, comment: str = "") -> str:
    """The text of ``path`` with ``key: value`` set on ``case``; ``comment`` is added after it in YAML."""
    raw, doc = read_document(path, display=display_path(path))
    text = raw.decode("utf-8")
    lines = text.split("\n")
    entry = _entry(doc, case)
    is_json = path.suffix in JSON_SUFFIXES + JSONL_SUFFIXES
    quoted = json.dumps(value) if is_json else value
    note = f"  # {' '.join(comment.split())}" if comment and not is_json else ""
    at = (*entry, key)
    if at in doc.values:
        line_no, col = doc.values[at]
        line = lines[line_no - 1]
        start = col - 1
        flow = is_json or _in_flow(lines, doc, entry)
        end = _token_end(line, start, flow=flow)
        rest = line[end:]
        if note and not flow:
            rest = ""  # the old comment on that line gives way to the new one
        lines[line_no - 1] = line[:start] + quoted + (note if not flow else "") + rest
        return "\n".join(lines)
    id_at = (*entry, "id")
    if id_at not in doc.values:
        raise InputError(f"{doc.file}: case {case.id!r} has no id to anchor the edit at")
    line_no, col = doc.values[id_at]
    line = lines[line_no - 1]
    if is_json or _in_flow(lines, doc, entry):
        end = _token_end(line, col - 1, flow=True)
        pair = f', "{key}": {quoted}' if is_json else f", {key}: {quoted}"
        lines[line_no - 1] = line[:end] + pair + line[end:]
        return "\n".join(lines)
    key_line, key_col = doc.keys[id_at]
    indent = " " * (key_col - 1)
    lines.insert(key_line, f"{indent}{key}: {quoted}{note}")
    return "\n".join(lines)


def _in_flow(lines: list[str], doc: Document, entry: JsonPath) -> bool:
    """True when the case's mapping is written in flow style (``{id: x, ...}``)."""
    line_no, col = doc.locate(entry)
    line = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
    return line[col - 1 : col] == "{"

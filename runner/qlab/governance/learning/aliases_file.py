"""Add an accepted alias to the reviewed aliases file (``collection.aliases`` in qlab.yaml).

The file stays what the collection loader reads: a YAML mapping ``{tool_id: [alias, ...]}``. Who accepted an
alias and when is written as a YAML comment on the alias's own line::

    getMemberDeliveryDetail:
      - shipment status  # accepted by alice at 2026-12-01T10:00:00Z (suggestion sg-1a2b3c4d5e6f)

(the suggestions file keeps the same record, ``accepted_by``/``accepted_at``, for tools). The edit is made in
the text, so the reviewers' own comments and layout survive: a block list gets a new item line after its last
item; a tool not in the file is appended at the end. Anything else (a flow list ``[a, b]``, an empty value)
gets that one key rewritten as a block list. The result is parsed again and compared with the intended data
before it is written (atomically); if they differ, nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qlab.contracts.errors import ConfigError, InputError
from qlab.governance.records import write_text
from qlab.project.yamlio import dump_scalar, parse_yaml

HEADER = "# Reviewed aliases: tool id -> phrases operators use for it. Edited by `qlab learn accept`.\n"


def add_aliases(path: Path, tool_id: str, aliases: Sequence[str], *, comment: str) -> list[str]:
    """Add ``aliases`` of ``tool_id`` with ``comment`` on each new line; returns the aliases actually added
    (those the tool already had are skipped). Raises InputError if the file is not a ``{tool: [aliases]}`` map."""
    comment = " ".join(comment.split())  # one line: a newline would end the comment and inject YAML
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    data = _load(text, path)
    existing = [str(a) for a in data.get(tool_id) or ()]
    new = [a for a in dict.fromkeys(aliases) if a not in existing]
    if not new:
        return []
    expected = dict(data)
    expected[tool_id] = [*existing, *new]
    edited = _edit(text, path, tool_id, existing, new, comment)
    if _load(edited, path) != expected:
        # the in-place edit did not give the intended data (unusual layout): rewrite that key as a block list
        edited = _rewrite_key(text, path, tool_id, existing, new, comment)
        if _load(edited, path) != expected:
            raise InputError(
                f"{path}: cannot add {new!r} to {tool_id!r} without changing other entries; add it by hand"
            )
    write_text(path, edited)
    return new


def load_mapping(text: str, path: Path, *, what: str) -> Any:
    """The data of a YAML file the learner adds entries to (``what`` names it in messages): ``{}`` when it holds
    only comments or nothing, InputError when it is not YAML. The caller checks the data's shape."""
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        return {}
    try:
        data = parse_yaml(text, str(path)).data
    except ConfigError as exc:
        raise InputError(f"the {what} is not valid YAML:\n{exc}") from None
    return {} if data is None else data


def _load(text: str, path: Path) -> dict[str, Any]:
    data = load_mapping(text, path, what="reviewed aliases file")
    if not isinstance(data, dict) or not all(isinstance(v, list) or v is None for v in data.values()):
        raise InputError(f"{path}: the reviewed aliases file must map tool ids to lists of aliases")
    return data


def _item_lines(new: Sequence[str], indent: str, comment: str) -> list[str]:
    return [f"{indent}- {dump_scalar(alias)}  # {comment}\n" for alias in new]


def _edit(text: str, path: Path, tool_id: str, existing: list[str], new: Sequence[str], comment: str) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    data = _load(text, path)
    if not data:
        body = "".join(lines) if lines else HEADER
        return body + f"{dump_scalar(tool_id)}:\n" + "".join(_item_lines(new, "  ", comment))
    if tool_id not in data:
        return "".join(lines) + f"{dump_scalar(tool_id)}:\n" + "".join(_item_lines(new, "  ", comment))
    if not existing:
        return ""  # an empty value: let the key be rewritten
    document = parse_yaml(text, str(path))
    line, _col = document.values[(tool_id, len(existing) - 1)]
    last = lines[line - 1]
    dash = last.find("-")
    if dash < 0 or last[:dash].strip():
        return ""  # a flow list: let the key be rewritten
    return "".join([*lines[:line], *_item_lines(new, last[:dash], comment), *lines[line:]])


def _rewrite_key(
    text: str, path: Path, tool_id: str, existing: list[str], new: Sequence[str], comment: str
) -> str:
    """Replace the lines of ``tool_id``'s entry (its key line up to the next top-level key) with a block list."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    document = parse_yaml(text, str(path))
    start = document.keys[(tool_id,)][0] - 1
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#-"):
        end += 1
    block = [
        f"{dump_scalar(tool_id)}:\n",
        *(f"  - {dump_scalar(a)}\n" for a in existing),
        *_item_lines(new, "  ", comment),
    ]
    return "".join([*lines[:start], *block, *lines[end:]])

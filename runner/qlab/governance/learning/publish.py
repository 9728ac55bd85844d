"""Publishing an accepted proposal: the one step that changes the project, and only after a person accepted it and
its sandbox eval passed its quality gate (``qlab learn accept``).

| type | written to |
|---|---|
| ``collection_metadata`` | the reviewed aliases file (``qlab.governance.learning.aliases_file``) |
| ``memory`` | the project knowledge file (``learning.knowledge_file``), a line per entry with who accepted it and when |
| ``eval_case`` | the regression suite, exactly as ``qlab accept-case`` writes a case (its proposal file is kept as the record) |
| ``policy`` | nothing: qlab never edits qlab.yaml; the exact edit is returned for the person to make |

Each edit is made in the text, so reviewers' comments and layout stay; the file is parsed again and compared
with the intended data before it is written (atomically), and nothing is written when they differ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.contracts.errors import InputError
from qlab.governance.learning.accept import ActivationCheck, accept_case, proposal_problems
from qlab.governance.learning.aliases_file import add_aliases, load_mapping
from qlab.governance.learning.apply import policy_edit, type_of
from qlab.governance.records import inside, resolve, write_json, write_text
from qlab.project.model import Config
from qlab.project.yamlio import dump_scalar, parse_yaml

KNOWLEDGE_HEADER = (
    "# Project knowledge every run applies (learning.knowledge_file). Edited by `qlab learn accept`.\n"
)


@dataclass(frozen=True, slots=True)
class Published:
    """What publishing did: the file written (None for a policy or a note), what was added, the edit to make."""

    written_to: str | None = None
    added: tuple[str, ...] = ()
    edit: str = ""
    case_id: str | None = None


def publish(
    config: Config,
    proposal: Mapping[str, Any],
    *,
    comment: str,
    by: str,
    check: ActivationCheck | None = None,
) -> Published:
    """Apply an accepted proposal to the project (see the module docstring)."""
    kind = proposal.get("kind")
    kind_type = type_of(proposal)
    if kind == "alias":
        if not config.collection.aliases_file:
            raise InputError(
                f"{config.path}: $.collection.aliases: no reviewed aliases file is configured; "
                "set collection.aliases (e.g. gates/aliases.yaml) to accept alias proposals"
            )
        path = resolve(config.path, config.collection.aliases_file)
        added = add_aliases(
            path, str(proposal["tool_id"]), [str(a) for a in proposal["aliases"]], comment=comment
        )
        return Published(str(config.collection.aliases_file), tuple(added))
    if kind_type == "memory":
        if not config.learning.knowledge_file:
            raise InputError(
                f"{config.path}: $.learning.knowledge_file: no knowledge file is configured; set it "
                "(e.g. gates/knowledge.yaml) to accept memory proposals"
            )
        path = resolve(config.path, config.learning.knowledge_file)
        added = []
        for section, entries in (proposal.get("change") or {}).items():
            for key, value in dict(entries).items():
                if add_entry(path, str(section), str(key), value, comment=comment):
                    added.append(f"{section}.{key}")
        return Published(str(config.learning.knowledge_file), tuple(added))
    if kind == "eval_case":
        record = dict(proposal["proposal"])
        folder = resolve(config.path, config.learning.proposals_dir)
        where = f"{config.learning.suggestions_file}: suggestion {proposal.get('id')}"
        # before anything is written: its file inside the proposals folder, its content a valid proposal
        path = inside(folder, f"{record.get('id')}.json", what=f"{where}: $.proposal.id")
        problems = proposal_problems(record)
        if problems:
            raise InputError(
                f"{where}: not a valid regression case proposal, nothing was written: {problems[0]}"
            )
        write_json(path, record)  # the proposal file is the audit trail accept-case keeps
        accepted = accept_case(path, config_path=Path(config.path), by=by, check=check)
        return Published(str(accepted.file), (accepted.case_id,), case_id=accepted.case_id)
    if kind_type == "policy":
        return Published(edit=policy_edit(proposal.get("change") or {}))
    return Published()


# ------------------------------------------------------------------------------------------- knowledge file


def _load(text: str, path: Path) -> dict[str, Any]:
    data = load_mapping(text, path, what="knowledge file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: the knowledge file maps query_rewrites and entity_defaults to entries")
    return data


def _value(value: Any) -> str:
    return (
        dump_scalar(value)
        if value is None or isinstance(value, (str, int, float, bool))
        else json.dumps(value)
    )


def add_entry(path: Path, section: str, key: str, value: Any, *, comment: str) -> bool:
    """Add ``key: value`` under ``section`` of the knowledge file with ``comment`` on its line; False when it
    is there already. Raises InputError when the edit would change anything else."""
    comment = " ".join(comment.split())
    text = path.read_text(encoding="utf-8") if path.exists() else KNOWLEDGE_HEADER
    data = _load(text, path)
    existing = dict(data.get(section) or {})
    if key in existing and existing[key] == value:
        return False
    expected = {**data, section: {**existing, key: value}}
    line = f"  {dump_scalar(key)}: {_value(value)}  # {comment}\n"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if section not in data:
        edited = "".join(lines) + f"{section}:\n" + line
    else:
        document = parse_yaml(text, str(path))
        start = document.keys[(section,)][0] - 1
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
            end += 1
        entries = [
            i
            for i in range(start + 1, end)
            if lines[i].strip() and lines[i][0] in " \t" and key_line(lines[i])
        ]
        if lines[start].split("#")[0].rstrip().endswith(":") and key not in existing:
            at = entries[-1] + 1 if entries else start + 1
            edited = "".join([*lines[:at], line, *lines[at:]])
        else:  # a flow mapping ({} or {a: b}), or a key to replace: that section is written again as a block
            block = [
                f"{section}:\n",
                *(f"  {dump_scalar(k)}: {_value(v)}\n" for k, v in existing.items() if k != key),
                line,
            ]
            edited = "".join([*lines[:start], *block, *lines[end:]])
    if _load(edited, path) != expected:
        raise InputError(
            f"{path}: cannot add {key!r} to {section} without changing other entries; add it by hand"
        )
    write_text(path, edited)
    return True


def key_line(line: str) -> bool:
    """An indented ``key: value`` line (not a comment)."""
    stripped = line.strip()
    return not stripped.startswith("#") and ":" in stripped

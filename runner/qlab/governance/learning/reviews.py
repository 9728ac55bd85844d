"""Every human decision on record: what people accepted, rejected or asked to regenerate.

Three kinds of record: the learning proposals (``learning.suggestions_file``: ``qlab learn accept`` / ``reject``),
the regression case proposals (``learning.proposals_dir``: ``qlab accept-case`` / ``--reject``) and the release
reviews (each release skill's ``approvals_file``: ``qlab approve`` / ``--reject`` / ``--regenerate``). The
scorecard's ``human_acceptance`` counts them, and the learning loop's ``reviewer_reject`` signal reads them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qlab.governance.learning.suggestions import load, suggestions_path
from qlab.governance.records import PENDING, resolve
from qlab.project.model import Config


def records(config: Config) -> list[dict[str, Any]]:
    """``{what, id, decision, by}`` for every decision on record (pending items are not decisions)."""
    out: list[dict[str, Any]] = []
    for item in load(suggestions_path(config)):
        status = str(item.get("status"))
        if status != PENDING:
            by = item.get("accepted_by") or item.get("rejected_by")
            out.append({"what": "proposal", "id": item.get("id"), "decision": status, "by": by,
                        "reason": item.get("reject_reason")})  # fmt: skip
    folder = resolve(config.path, config.learning.proposals_dir)
    for path in sorted(folder.glob("prop-*.json")) if folder.is_dir() else ():
        item = _json(path)
        status = str(item.get("status"))
        if status in ("accepted", "rejected"):
            by = item.get("accepted_by") or item.get("rejected_by")
            out.append({"what": "regression case proposal", "id": item.get("id"), "decision": status, "by": by,
                        "reason": item.get("reject_reason")})  # fmt: skip
    if config.release:  # every run reads the decisions; the release machinery only when there are skills
        out += _release_reviews(config)
    return out


def _release_reviews(config: Config) -> list[dict[str, Any]]:
    from qlab.governance.release import skill as release

    out: list[dict[str, Any]] = []
    seen: set[Path] = set()
    for skill in config.release.values():
        path = release.approvals_path(config, skill)
        if path in seen:
            continue
        seen.add(path)
        for item in release.load_approvals(path):
            out.append({"what": f"release review of {item.get('skill')}", "id": item.get("result_digest"),
                        "decision": str(item.get("decision")), "by": item.get("reviewer"),
                        "reason": item.get("note")})  # fmt: skip
    return out


def _json(path: Path) -> dict[str, Any]:
    """A proposal file, or nothing when it does not read (``qlab accept-case`` reports it with its location)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def decisions(config: Config) -> list[str]:
    """Just the decisions (accepted, rejected, approved, regenerate), for the scorecard's human_acceptance."""
    return [str(r["decision"]) for r in records(config)]

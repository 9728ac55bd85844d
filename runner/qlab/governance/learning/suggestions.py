"""The suggestions file (``learning.suggestions_file``): every learning suggestion and its review state.

``{"version": 1, "suggestions": [...]}`` (schema: ``schemas/suggestions.schema.json``): the learning proposals of
the four types. A proposal's ``status`` is ``pending_review`` until a person runs ``qlab learn accept ID --by
NAME`` (→ ``accepted``, and it is published: ``qlab.governance.learning.publish``) or ``qlab learn reject ID --by
NAME`` (→ ``rejected``). Its sandbox eval (``qlab learn sandbox``) is kept with it under ``sandbox``. Saving new
proposals never changes a reviewed one: learning never takes effect automatically.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qlab.adapters.atomic import write_atomic
from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts.errors import InputError, UsageError
from qlab.contracts.results import to_json
from qlab.governance.records import PENDING, now_iso, read_json, resolve
from qlab.project.model import Config

if TYPE_CHECKING:
    from qlab.governance.learning.accept import ActivationCheck

VERSION = 1
# what a later run may refresh on a suggestion still pending review
_REFRESHED = ("evidence", "shadow", "run_id", "text", "signal")


def suggestions_path(config: Config) -> Path:
    return resolve(config.path, config.learning.suggestions_file)


def write(path: Path, items: Sequence[Mapping[str, Any]]) -> None:
    """Write the suggestions file atomically: one suggestion per line (diffs stay readable)."""
    write_atomic(path, _pieces(items))


def _pieces(items: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    yield '{\n  "version": ' + json.dumps(VERSION) + ',\n  "suggestions": ['
    for index, item in enumerate(items):
        yield ("\n    " if index == 0 else ",\n    ") + json.dumps(item, ensure_ascii=False, default=to_json)
    yield ("\n  ]" if items else "]") + "\n}\n"


def load(path: Path) -> list[dict[str, Any]]:
    """The stored suggestions (none when the file does not exist yet)."""
    if not path.exists():
        return []
    data = read_json(path, what="suggestions file")
    items = data.get("suggestions") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(
        isinstance(s, dict) and isinstance(s.get("id"), str) for s in items
    ):
        raise InputError(f"{path}: $.suggestions: expected a list of suggestions with an id each")
    return items


def save(path: Path, new: Sequence[Mapping[str, Any]], *, now: str | None = None) -> list[dict[str, Any]]:
    """Merge ``new`` suggestions into the file and return the merged list.

    A new id is added as ``pending_review`` with ``created_at``; a known id still pending gets its evidence,
    shadow result and run refreshed; a reviewed one (accepted/rejected) is left exactly as it is.
    """
    stamp = now or now_iso()
    stored = load(path)
    by_id = {s["id"]: s for s in stored}
    for suggestion in new:
        known = by_id.get(str(suggestion["id"]))
        if known is None:
            item = {**suggestion, "status": PENDING, "created_at": stamp}
            stored.append(item)
            by_id[item["id"]] = item
        elif known.get("status") == PENDING:
            for key in _REFRESHED:
                if key in suggestion:
                    known[key] = suggestion[key]
            known["last_seen_at"] = stamp
    write(path, stored)
    return stored


def store_learned(config: Config, artifact: Mapping[str, Any]) -> Path | None:
    """Merge the suggestions a run's learn stage made into the suggestions file as ``pending_review`` (nothing is
    applied: ``qlab learn accept`` is the only way one reaches the project); the file, when there were any."""
    learn = (artifact.get("stages") or {}).get("learn") or {}
    learned = (learn.get("details") or {}).get("suggestions")
    if not learned:
        return None
    path = suggestions_path(config)
    save(path, learned)
    return path


def find(items: Sequence[Mapping[str, Any]], wanted: str) -> Mapping[str, Any]:
    """The suggestion with id ``wanted`` (or a unique prefix of it); UsageError otherwise."""
    exact = [s for s in items if s["id"] == wanted]
    found = exact or [s for s in items if str(s["id"]).startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if not found:
        hint = did_you_mean(wanted, [str(s["id"]) for s in items])
        raise UsageError(f"no suggestion {wanted!r}.{hint} List them with `qlab learn list`.")
    raise UsageError(f"{wanted!r} matches {len(found)} suggestions; give more of the id")


@dataclass(frozen=True, slots=True)
class Review:
    """What ``accept``/``reject`` did: the proposal after review, what was added and where (accept only), and the
    qlab.yaml edit a person makes for an accepted policy proposal."""

    suggestion: Mapping[str, Any]
    written: tuple[str, ...] = ()
    written_to: str | None = None
    edit: str = ""


def accept(
    config: Config,
    suggestion_id: str,
    *,
    by: str,
    now: str | None = None,
    sandbox: Mapping[str, Any] | None = None,
    check: ActivationCheck | None = None,
) -> Review:
    """Accept a pending proposal and publish it (``qlab.governance.learning.publish``): an alias goes to the
    reviewed aliases file, a memory entry to the knowledge file, an eval case to the regression suite, each with
    a comment naming ``by`` and the time; a policy change is recorded with the qlab.yaml edit to make; a note is
    recorded (a person acts on it).

    Learning never takes effect without its sandbox eval: the proposal's quality gate (``sandbox``, else the one
    stored with it by ``qlab learn sandbox``) must have passed, or InputError says so and nothing changes."""
    # publishing is imported here: every run reads this file (the scorecard's reviews), few accept
    from qlab.governance.learning.apply import applicable
    from qlab.governance.learning.publish import publish

    reviewer = _reviewer(by)
    stamp = now or now_iso()
    path = suggestions_path(config)
    items = load(path)
    target = dict(find(items, suggestion_id))
    _must_be_pending(target)
    outcome = dict(sandbox) if sandbox is not None else target.get("sandbox")
    if applicable(target):
        refused = _refusal(outcome)
        if refused:
            raise InputError(
                f"proposal {target['id']} cannot be published: {refused}; see `qlab learn sandbox {target['id']}`"
            )
    comment = f"accepted by {reviewer} at {stamp} (suggestion {target['id']})"
    published = publish(config, target, comment=comment, by=reviewer, check=check)
    target.update(status="accepted", accepted_by=reviewer, accepted_at=stamp)
    if outcome is not None:
        target["sandbox"] = outcome
    if published.written_to:
        target["written_to"] = published.written_to
    if published.edit:
        target["edit"] = published.edit
    _replace(path, items, target)
    return Review(target, published.added, published.written_to, published.edit)


def _refusal(outcome: Mapping[str, Any] | None) -> str:
    """Why a proposal with this sandbox eval may not be published ("" when it may): no sandbox eval, a
    regression (a case that passed as is and fails with the proposal, or a decision that gets worse), or a
    quality gate that failed."""
    if not outcome:
        return "it has no sandbox eval yet"
    regression = outcome.get("regressionCheck") or {}
    if regression.get("passed") is False:
        worse = [
            f"{r['case_id']} ({r.get('before')} → {r.get('after')})"
            for r in regression.get("regressed") or ()
        ]
        worse += [
            f"run {d['run_id']} ({d['before']} → {d['after']})"
            for d in regression.get("decisions_worse") or ()
        ]
        worse += [
            f"the proposed case {c['case_id']} ({c.get('after')})"
            for c in regression.get("new_failing") or ()
        ]
        shown = ", ".join(worse[:5]) + (f" and {len(worse) - 5} more" if len(worse) > 5 else "")
        return f"its sandbox eval shows a regression: {shown}"
    gate = outcome.get("qualityGate") or {}
    if not gate.get("passed"):
        failed = [c["name"] for c in gate.get("checks") or () if not c.get("passed")]
        return f"its quality gate failed ({', '.join(failed)})"
    return ""


def store_sandbox(config: Config, suggestion_id: str, outcome: Mapping[str, Any]) -> dict[str, Any]:
    """Keep a sandbox eval with its (pending) proposal; returns the proposal."""
    path = suggestions_path(config)
    items = load(path)
    target = dict(find(items, suggestion_id))
    target["sandbox"] = dict(outcome)
    _replace(path, items, target)
    return target


def reject(
    config: Config, suggestion_id: str, *, by: str, reason: str = "", now: str | None = None
) -> Review:
    """Reject a pending suggestion (nothing else changes); counted by the scorecard's human_acceptance."""
    reviewer = _reviewer(by)
    path = suggestions_path(config)
    items = load(path)
    target = dict(find(items, suggestion_id))
    _must_be_pending(target)
    target.update(status="rejected", rejected_by=reviewer, rejected_at=now or now_iso())
    if reason:
        target["reject_reason"] = reason
    _replace(path, items, target)
    return Review(target)


def _reviewer(by: str) -> str:
    name = " ".join(by.split())
    if not name:
        raise UsageError("--by needs the reviewer's name")
    return name


def _must_be_pending(item: Mapping[str, Any]) -> None:
    if item.get("status") != PENDING:
        who = item.get("accepted_by") or item.get("rejected_by") or "someone"
        raise UsageError(f"suggestion {item['id']} is already {item.get('status')} (by {who})")


def _replace(path: Path, items: list[dict[str, Any]], updated: dict[str, Any]) -> None:
    out = [updated if s["id"] == updated["id"] else s for s in items]
    write(path, out)

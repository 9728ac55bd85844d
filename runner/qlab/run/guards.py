"""A check's identity, and one record per identity when a check ran several times.

A guard (an in-run or pre-run check) is identified by its gate, stage, name and subject (``GuardResult.subject``:
the environment of a pre-run check, ``requests sent`` for the execute boundary's policy checks). Repeats of a
stage (``Suite.repeat``) and the shards of a matrix run the same check several times; every output writes it
once: a check that failed in any of its runs failed. Their messages differ (counts, elapsed times), so they are
never part of the identity: a merged run has exactly the checks, and the JUnit testcases, of the unsharded one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Identity = tuple[str, str, str, str]


def identity(guard: Mapping[str, Any]) -> Identity:
    """(gate, stage, guard, subject) of a guard record; absent parts are empty."""
    return (
        str(guard.get("gate") or ""),
        str(guard.get("stage") or ""),
        str(guard.get("guard") or ""),
        str(guard.get("subject") or ""),
    )


def combine(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """One record per identity from ``(where, guard)`` pairs, in first-seen order. ``where`` names the run a
    record came from (``shard 2/3``; empty for repeats of one run).

    A check passed when every run of it passed; its message is the one they share (``every shard: …`` when shards
    said it each of their own cases), else each differing message prefixed with where it came from (a failed check
    shows only the runs where it failed); its reason is the first failed run's."""
    groups: dict[Identity, list[tuple[str, Mapping[str, Any]]]] = {}
    for where, guard in runs:
        groups.setdefault(identity(guard), []).append((where, guard))
    out = []
    for items in groups.values():
        record = dict(items[0][1])
        failed = [(w, g) for w, g in items if not g.get("passed")]
        record["passed"] = not failed
        shown = failed or items
        messages = list(dict.fromkeys((w, str(g.get("message", ""))) for w, g in shown))
        if len({m for _, m in messages}) == 1:
            # the same words from several shards: each said it of its own cases
            named = len(shown) > 1 and all(w for w, _ in shown)
            record["message"] = f"every shard: {messages[0][1]}" if named else messages[0][1]
        else:
            record["message"] = "; ".join(f"{w}: {m}" if w else m for w, m in dict.fromkeys(messages))
        if failed:
            reason = next((g.get("reason") for _, g in failed if g.get("reason")), None)
            if reason:
                record["reason"] = reason
            else:
                record.pop("reason", None)
        out.append(record)
    return out


def once(guards: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``combine`` for the records of one run (repeats of a stage): no origin to name."""
    return combine(("", g) for g in guards)

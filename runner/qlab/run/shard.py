"""Sharding a run over a CI matrix: ``--shard i/N`` (1-based), a deterministic partition by stable case id,
optionally balanced by a durations file.

Same inputs give the same partition on every runner and every retry: cases are ordered by id (never by file
system, dict or hash-seed order). With durations, the greedy "least duration" split of pytest-split is used:
cases sorted by id, then by duration (longest first), each given to the shard with the smallest total so far,
ties to the lowest shard index; unknown ids get the mean known duration. Each shard keeps the selection order.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from qlab.contracts.errors import InputError, UsageError

T = TypeVar("T")
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class ShardSpec:
    index: int  # 1-based
    total: int

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``"2/3"`` -> ShardSpec(2, 3). Raises UsageError for anything else."""
        match = _SPEC.match(text)
        if not match:
            raise UsageError(f"--shard {text!r}: expected i/N with 1 <= i <= N, e.g. --shard 1/3")
        index, total = int(match.group(1)), int(match.group(2))
        if total < 1 or not 1 <= index <= total:
            raise UsageError(f"--shard {text!r}: the index must be between 1 and {max(total, 1)} (1-based)")
        return cls(index, total)

    @property
    def label(self) -> str:
        return f"{self.index}-of-{self.total}"


def selection_fingerprint(case_ids: Sequence[str], *, config_digest: str, commit: str | None) -> str:
    """sha256 of the sorted selected case ids, the config digest and the commit: equal on every shard of one
    matrix, different as soon as any shard saw another selection, config or checkout."""
    h = hashlib.sha256()
    for case_id in sorted(case_ids):
        h.update(case_id.encode("utf-8"))
        h.update(b"\n")
    h.update(f"config:{config_digest}\ncommit:{commit or ''}\n".encode())
    return "sha256:" + h.hexdigest()


def case_manifest(case_ids: Iterable[str]) -> dict[str, Any]:
    """What a shard records of the selection it ran: how many cases and the sha256 of their sorted ids, so a
    merge can tell a shard whose cases were added or removed afterwards."""
    ids = sorted(set(case_ids))
    h = hashlib.sha256()
    for case_id in ids:
        h.update(case_id.encode("utf-8"))
        h.update(b"\n")
    return {"count": len(ids), "digest": "sha256:" + h.hexdigest()}


def assign(ids: Sequence[str], total: int, *, durations: Mapping[str, float] | None = None) -> dict[str, int]:
    """Case id -> 1-based shard index. Without durations every case weighs 1 (a round robin over sorted ids)."""
    known = [float(durations[i]) for i in ids if durations and i in durations]
    default = sum(known) / len(known) if known else 1.0
    weight = {i: float(durations[i]) if durations and i in durations else default for i in ids}
    # sort by id first, then (stable) by weight descending: ties keep id order
    order = sorted(sorted(set(ids)), key=lambda i: -weight[i])
    heap = [(0.0, shard) for shard in range(1, total + 1)]
    out: dict[str, int] = {}
    for case_id in order:
        load, shard = heapq.heappop(heap)
        out[case_id] = shard
        heapq.heappush(heap, (load + weight[case_id], shard))
    return out


def partition(
    items: Sequence[T], spec: ShardSpec, *, key: str, durations: Mapping[str, float] | None = None
) -> list[T]:
    """The items of shard ``spec``, in their original order. ``key`` names the attribute holding the stable id."""
    owner = assign([str(getattr(item, key)) for item in items], spec.total, durations=durations)
    return [item for item in items if owner[str(getattr(item, key))] == spec.index]


def load_durations(path: str | Path) -> dict[str, float]:
    """Read a durations file: a flat JSON object ``{case_id: seconds}`` (pytest-split's format)."""
    p = Path(path)
    if p.exists() and not p.is_file():
        raise InputError(
            f"{p}: not a regular file (a folder, a FIFO, a socket or a device); pass a JSON file"
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"{p}: durations file not found; write one with `qlab merge` (durations.json)"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}:{exc.colno}: $: invalid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{p}: not a readable JSON durations file: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: $: expected an object {{case_id: seconds}}")
    out: dict[str, float] = {}
    for case_id, seconds in data.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise InputError(f"{p}: $.{case_id}: expected a number of seconds >= 0, got {seconds!r}")
        out[str(case_id)] = float(seconds)
    return out


def durations_of(cases: Sequence[Mapping[str, object]]) -> dict[str, float]:
    """``{case_id: seconds}`` from the per-stage latencies of result cases, sorted by id."""
    out: dict[str, float] = {}
    for case in cases:
        latency = case.get("latency_ms") or {}
        total = sum(float(v) for v in latency.values()) if isinstance(latency, Mapping) else 0.0
        out[str(case["case_id"])] = round(total / 1000.0, 6)
    return dict(sorted(out.items()))

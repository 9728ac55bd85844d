"""Phase marks of one command, for the whole-process benchmarks (``bench/whole.py``); off unless asked for.

With ``QLAB_TIMINGS=FILE`` in the environment, each ``mark(phase)`` appends one JSON line
``{"phase": ..., "t": seconds}`` to FILE, where ``t`` counts from ``QLAB_TIMINGS_T0`` (the parent's
``time.time()`` just before it started this process) or, without it, from the first mark. The parent adds the
moment it saw the process end, so a run splits into: interpreter start and imports, loading, each gate,
artifact, outputs, and teardown. Without the variable a mark costs one global lookup.
"""

from __future__ import annotations

import json
import os
import time

_FILE = os.environ.get("QLAB_TIMINGS") or None
_T0: float | None = None
if _FILE is not None:
    try:
        _T0 = float(os.environ.get("QLAB_TIMINGS_T0", ""))
    except ValueError:
        _T0 = None


def enabled() -> bool:
    return _FILE is not None


def mark(phase: str) -> None:
    """Record that ``phase`` ended now (a no-op unless ``QLAB_TIMINGS`` is set)."""
    global _T0
    if _FILE is None:
        return
    now = time.time()
    if _T0 is None:
        _T0 = now
    with open(_FILE, "a", encoding="utf-8") as out:
        out.write(json.dumps({"phase": phase, "t": round(now - _T0, 6)}) + "\n")

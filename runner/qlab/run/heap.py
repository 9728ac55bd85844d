"""The cyclic garbage collector during a command: what the command has built or read lives until its end, so it
is not rescanned. Every command runs in ``frozen_heap`` (``qlab.cli.main``; ``qlab.run.runner.run`` too, for
callers in process); ``qlab run`` settles after loading and after each gate, and the readers of finished runs
(``qlab.run.artifact.read``, ``qlab.governance.records.load_artifact``) ``settle()`` what they read.

CPython's full collections walk every tracked object. A run builds large structures that live until it ends
(the loaded cases, then each gate's results), and a full collection with 100,000 loaded cases walks hundreds of
MB for nothing: measured on a 100,000-case search run, six full collections took 2.5 s of a 29 s process, two
of them (1.6 s) while the outputs were written, after the run itself had handed its objects back to the GC. A
command that reads runs paid the same: the HTML report of a 100,000-case run took 7.2 s instead of 4.2, the
promotion of two such runs read the second in 7.3 s instead of 5.3 (bench/RESULTS-report.md,
RESULTS-governance.md).

``frozen_heap()`` covers a whole command (load, run, outputs): what exists when it starts is frozen
(``gc.freeze``: moved out of the collector's generations), full collections are 100 times rarer (young objects
are still collected as usual), and ``settle()`` freezes again at each point where what was just built lives on
(after loading, after each gate). Nested uses are one: the outermost restores the settings and unfreezes.

Only cyclic garbage is affected: objects freed by reference counting are freed as always. A frozen object that
later becomes part of a garbage cycle is kept until the outermost block ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0


@contextmanager
def frozen_heap() -> Iterator[None]:
    """See the module docstring."""
    global _depth
    with _LOCK:
        _depth += 1
        outermost = _depth == 1
        if outermost:
            thresholds = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(thresholds[0], thresholds[1], thresholds[2] * 100)
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if outermost:
                gc.set_threshold(*thresholds)
                gc.unfreeze()


def settle() -> None:
    """Inside ``frozen_heap``: what exists now lives until the block ends; keep the collector off it."""
    with _LOCK:
        if _depth:
            gc.freeze()


__all__ = ["frozen_heap", "settle"]

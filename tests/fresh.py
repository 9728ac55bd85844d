"""A fresh interpreter, for what only a new process shows: which modules an import loads."""

from __future__ import annotations

import json
import subprocess
import sys


def run_fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (this one's executable and paths); its stdout. Fails the test with the
    child's stderr when it exits non-zero."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def modules_after(statement: str) -> set[str]:
    """The names in ``sys.modules`` of a new interpreter once it has run ``statement``."""
    return set(
        json.loads(run_fresh(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"))
    )

"""The wheel a maintainer would publish, built from this checkout for the tests that install it.

Nothing is published yet under the distribution's name (``qualitylab``), so the tests that install qlab the
way a user does build the wheel here and let pip find it with ``--find-links``: the install line stays the
user's, only the place pip takes qlab from differs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "qualitylab"


def build_wheel(dest: Path) -> Path:
    """Build this checkout's wheel into ``dest`` (pip's isolated build, as ``python -m build`` does); its path."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    wheels = sorted(dest.glob(f"{DISTRIBUTION}-*.whl"))
    assert len(wheels) == 1, (wheels, done.stderr[-2000:])
    return wheels[0]

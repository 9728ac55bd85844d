"""The ``tap`` report format: one line per case in the Test Anything Protocol (version 14), which many CI
systems and ``prove`` read.

    qlab report .qlab/out/result.json --format tap=qlab.tap
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def render(artifact: Mapping[str, Any]) -> str:
    """A result artifact (result.json, already scrubbed of secrets) as TAP."""
    cases = artifact.get("cases") or []
    lines = ["TAP version 14", f"1..{len(cases)}"]
    for number, case in enumerate(cases, start=1):
        status = case.get("status")
        title = f"{case.get('suite')}/{case.get('case_id')}".replace("#", "")
        if status == "skipped":
            lines.append(f"ok {number} - {title} # SKIP")
            continue
        lines.append(f"{'ok' if status == 'passed' else 'not ok'} {number} - {title}")
        failure = case.get("failure")
        if status != "passed" and failure:
            lines.append("  ---")  # a YAML block; JSON strings are valid YAML scalars, whatever they hold
            for key in ("stage", "reason", "message"):
                if key in failure:
                    lines.append(f"  {key}: {json.dumps(failure[key])}")
            lines.append("  ...")
    return "\n".join(lines) + "\n"

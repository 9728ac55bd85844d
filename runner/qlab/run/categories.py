"""Results per eval category (all seven: flow, step, skill, artifact, evidence, policy, regression).

A suite's ``category`` in qlab.yaml decides where its cases count. Every category is reported, also those no
suite uses (with zero cases and ``pass_rate: None``), so a summary shows what the project does not evaluate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.project.model import CATEGORIES

STATUSES: tuple[str, ...] = ("passed", "failed", "error", "blocked", "skipped")
UNCATEGORIZED = "uncategorized"


def by_category(artifact: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{category: {suites, required, counts: {total, passed, failed, error, blocked, skipped}, pass_rate}}``
    (the ``categories`` shape of ``schemas/result.schema.json``, plus the suites and whether any of them gates).

    ``pass_rate`` = passed / evaluated (passed + failed + error), ``None`` when nothing was evaluated.
    ``required`` is true when any of the category's suites gates. Cases of a suite the artifact does not
    describe are counted under ``uncategorized`` (only present when there are such cases).
    """
    suites: Mapping[str, Any] = artifact.get("suites") or {}
    suite_category: dict[str, str] = {}
    out: dict[str, dict[str, Any]] = {name: _empty() for name in CATEGORIES}
    for name, suite in suites.items():
        category = suite.get("category") if isinstance(suite, Mapping) else None
        category = category if category in out else UNCATEGORIZED
        suite_category[name] = category
        bucket = out.setdefault(category, _empty())
        bucket["suites"].append(name)
        if isinstance(suite, Mapping) and suite.get("required", True):
            bucket["required"] = True
    for case in artifact.get("cases") or ():
        category = suite_category.get(str(case.get("suite")), UNCATEGORIZED)
        counts = out.setdefault(category, _empty())["counts"]
        counts["total"] += 1
        status = case.get("status")
        if status in STATUSES:
            counts[status] += 1
    for bucket in out.values():
        counts = bucket["counts"]
        evaluated = counts["passed"] + counts["failed"] + counts["error"]
        bucket["pass_rate"] = round(counts["passed"] / evaluated, 6) if evaluated else None
    return out


def _empty() -> dict[str, Any]:
    counts = {"total": 0, **{status: 0 for status in STATUSES}}
    return {"suites": [], "required": False, "counts": counts, "pass_rate": None}


def markdown(categories: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table of ``by_category``'s result (the summary and ``qlab report`` can embed it)."""
    lines = [
        "| category | suites | cases | passed | failed | error | blocked | pass rate |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in categories.items():
        rate = "—" if row["pass_rate"] is None else f"{row['pass_rate']:.1%}"
        suites = ", ".join(row["suites"]) or "—"
        c = row["counts"]
        lines.append(
            f"| {name} | {suites} | {c['total']} | {c['passed']} | {c['failed']} | {c['error']} "
            f"| {c['blocked']} | {rate} |"
        )
    return "\n".join(lines) + "\n"

"""How one case changed between two runs: the classes ``qlab promote`` judges and the reports show.

Like is compared with like. A case is **fixed**, **regressed**, **still failing** or **passing** only when both
runs judged it (status passed, failed or error; not an infrastructure fault). A case one run did not judge —
blocked by an earlier gate, skipped, or failed for an infrastructure reason — is **unevaluated**: it is listed,
never evidence either way. A case only the candidate has is **new passing** or **new failing**, judged on its own;
one only the baseline has is **removed**.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.contracts.reasons import is_infrastructure

CHANGE_KINDS: tuple[str, ...] = (
    "regressed",
    "fixed",
    "still_failing",
    "new_failing",
    "new_passing",
    "unevaluated",
    "removed",
    "passing",
)
# the kinds that rest on both runs having judged the case: the only evidence a comparison of runs gives
COMPARED: frozenset[str] = frozenset({"regressed", "fixed", "still_failing", "passing"})

Case = Mapping[str, Any]


def evaluated(case: Case | None) -> bool:
    """True when the run judged the case: it passed, or failed for a product reason."""
    if case is None:
        return False
    status = case.get("status")
    if status == "passed":
        return True
    reason = (case.get("failure") or {}).get("reason")
    return status in ("failed", "error") and not is_infrastructure(reason)


def change_kind(before: Case | None, after: Case | None) -> str:
    """The class of a case from the baseline (``before``) to the candidate (``after``); None: not in that run."""
    if before is None and after is None:
        raise ValueError("a case is in at least one of the runs")
    if after is None:
        return "removed"
    if before is None:
        if not evaluated(after):
            return "unevaluated"
        return "new_passing" if after.get("status") == "passed" else "new_failing"
    if not (evaluated(before) and evaluated(after)):
        return "unevaluated"
    was, now = before.get("status") == "passed", after.get("status") == "passed"
    if was and now:
        return "passing"
    if was:
        return "regressed"
    return "fixed" if now else "still_failing"

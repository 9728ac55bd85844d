"""How a case changed between two runs (``qlab.contracts.changes``): like is compared with like."""

from __future__ import annotations

from typing import Any

import pytest

from qlab.contracts.changes import COMPARED, change_kind, evaluated

PASSED = {"status": "passed"}
FAILED = {"status": "failed", "failure": {"reason": "expected_target_absent"}}
ERRORED = {"status": "error", "failure": {"reason": "assertion_failed"}}  # a product error: judged
INFRA = {"status": "error", "failure": {"reason": "environment_unreachable"}}  # not judged
INFRA_FAILED = {"status": "failed", "failure": {"reason": "llm_unreachable"}}
BLOCKED = {"status": "blocked", "failure": {"reason": "blocked_by_stage"}}
SKIPPED = {"status": "skipped"}


@pytest.mark.parametrize(
    ("case", "judged"),
    [(None, False), (PASSED, True), (FAILED, True), (ERRORED, True), (INFRA, False), (INFRA_FAILED, False),
     (BLOCKED, False), (SKIPPED, False), ({"status": "failed"}, True)],
)  # fmt: skip
def test_evaluated(case: dict[str, Any] | None, judged: bool) -> None:
    assert evaluated(case) is judged


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        (PASSED, PASSED, "passing"), (PASSED, FAILED, "regressed"), (PASSED, ERRORED, "regressed"),
        (FAILED, PASSED, "fixed"), (FAILED, FAILED, "still_failing"), (ERRORED, FAILED, "still_failing"),
        (PASSED, BLOCKED, "unevaluated"), (BLOCKED, PASSED, "unevaluated"), (PASSED, INFRA, "unevaluated"),
        (INFRA, FAILED, "unevaluated"), (SKIPPED, SKIPPED, "unevaluated"),
        (None, PASSED, "new_passing"), (None, FAILED, "new_failing"), (None, BLOCKED, "unevaluated"),
        (PASSED, None, "removed"), (BLOCKED, None, "removed"),
    ],
)  # fmt: skip
def test_change_kinds(before: dict[str, Any] | None, after: dict[str, Any] | None, kind: str) -> None:
    """Rule: fixed / regressed / still failing / passing only when both runs judged the case; otherwise
    unevaluated (never evidence); a case in one run only is new or removed."""
    assert change_kind(before, after) == kind
    assert (kind in COMPARED) is (
        before is not None and after is not None and evaluated(before) and evaluated(after)
    )


def test_a_case_in_neither_run_is_a_mistake() -> None:
    with pytest.raises(ValueError) as caught:
        change_kind(None, None)
    assert str(caught.value) == "a case is in at least one of the runs"

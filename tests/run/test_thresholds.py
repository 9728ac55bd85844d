"""The thresholds init writes hold on the figures measured, in the gate's own arithmetic (the recorded figure
compared, the failing cases tolerated), and one case lost breaks them."""

from __future__ import annotations

import pytest

from qlab.run.gates import OPS, allowed
from qlab.run.thresholds import coverage, floor_text, places_for, share


def _blocks(cases: int, failing: int, recorded: float, value: float) -> bool:
    """Whether a gate ``hit_at_k >= value`` blocks ``failing`` failures of ``cases`` recorded as ``recorded``."""
    return not OPS[">="](recorded, value) or allowed(cases, ">=", value) < failing


@pytest.mark.parametrize("cases", [*range(1, 120), 999, 1004, 1123, 1999, 20000])
def test_a_share_holds_on_the_run_that_measured_it_and_one_case_less_blocks(cases: int) -> None:
    for hits in range(cases + 1) if cases < 2000 else range(cases - 60, cases + 1):
        recorded = round(hits / cases, 6)  # as qlab.contracts.metrics records a rate
        threshold = share("hit_at_k", recorded, cases=cases, failing=cases - hits)
        value = float(threshold.value)
        assert not _blocks(cases, cases - hits, recorded, value), (cases, hits, threshold)
        if hits:
            fewer = round((hits - 1) / cases, 6)
            assert _blocks(cases, cases - hits + 1, fewer, value), (cases, hits, threshold)


def test_a_recorded_share_rounded_up_is_lowered_until_the_gate_tolerates_the_failures() -> None:
    # 979 of 1,004 search cases: recorded 0.9751 (0.975099…); at 0.9751 the gate tolerates 24 failures, not 25
    assert allowed(1004, ">=", 0.9751) == 24
    assert share("hit_at_k", 0.9751, cases=1004, failing=25).value == "0.975"
    assert (
        share("mrr", 0.9751, cases=1004, failing=25).value == "0.9751"
    )  # not a share of cases: no tolerance


@pytest.mark.parametrize("cases", [1, 7, 19, 78, 100, 101, 999, 1223, 20000, 2_000_000])
def test_mrr_holds_at_its_figure_and_breaks_one_rank_step_lower(cases: int) -> None:
    places = places_for(cases, spread=30)
    for step in {0, 1, cases // 3, cases - 1, cases}:
        recorded = round(step / cases, 6)
        value = float(share("mrr", recorded, cases=cases, failing=0, spread=30).value)
        assert value <= recorded
        if step and places < 6:
            assert round((step - 1) / cases, 6) < value


def test_floor_text_rounds_down_and_stays_short() -> None:
    assert floor_text(0.947368, 2) == "0.94"
    assert floor_text(0.29, 2) == "0.29"  # 0.29 * 100 is 28.999… in binary: Decimal keeps it exact
    assert floor_text(1.0, 4) == "1.0" and floor_text(0.0, 2) == "0.0"
    assert floor_text(0.906, 4) == "0.906"
    assert coverage(0.8387).value == "0.8387" and coverage(0.83875).value == "0.8387"

"""The thresholds ``qlab init --from-openapi`` writes: the figures its measuring run recorded, rounded down to
a precision finer than one case (``places_for``), then checked in the gate's own arithmetic so the first
``qlab run`` on the unchanged spec passes and one case lost blocks.

A threshold on a share of cases (``Metric.counts_cases``) also says how many failing cases the gate tolerates
(``qlab.run.gates.allowed``). A recorded figure is itself rounded, so a threshold floored from it can tolerate
one case fewer than failed: ``share`` then lowers it one step at a time until the gate tolerates the cases that
failed in the measuring run. The build gate's schema coverage is written at ``COVERAGE_PLACES``."""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal

from qlab.contracts.metrics import METRICS
from qlab.project.starter.model import Threshold
from qlab.run.gates import OPS, allowed

MOST_PLACES = 6  # qlab records rates to 6 decimals: a finer threshold could sit above the recorded figure
COVERAGE_PLACES = 4  # the readiness report records schema_coverage to 4 decimals
RANK_STEPS = 30  # a case moving from rank r to r + 1 within the top K moves MRR by at least 1 / (K (K + 1) n)


def places_for(cases: int, *, spread: int = 1) -> int:
    """Decimal places at which one case out of ``cases`` (a ``1/spread`` share of one) moves the figure."""
    return max(2, min(MOST_PLACES, math.ceil(math.log10(max(cases * spread, 1)))))


def floor_decimal(value: float, places: int) -> Decimal:
    """``value`` (as its shortest decimal) rounded down to ``places`` decimals."""
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_FLOOR)


def written(value: Decimal) -> str:
    """A decimal as short as it goes, with a point: ``0.940`` → ``0.94``, ``1`` → ``1.0``."""
    text = format(value.normalize(), "f")
    return text if "." in text else f"{text}.0"


def floor_text(value: float, places: int) -> str:
    """``value`` rounded down to ``places`` decimals, as short as it goes: 0.947368 → ``0.94`` (2)."""
    return written(floor_decimal(value, places))


def share(metric: str, recorded: float, *, cases: int, failing: int, spread: int = 1) -> Threshold:
    """The threshold ``metric >= value`` a gate over ``cases`` cases, ``failing`` of which failed, passes with
    the ``recorded`` figure (see the module docstring)."""
    places = places_for(cases, spread=spread)
    value = floor_decimal(recorded, places)
    step = Decimal(1).scaleb(-places)
    counts = METRICS[metric].counts_cases if metric in METRICS else False
    while value > 0 and not (
        OPS[">="](recorded, float(value)) and (not counts or allowed(cases, ">=", float(value)) >= failing)
    ):
        value -= step
    return Threshold(metric, written(value), recorded)


def coverage(recorded: float) -> Threshold:
    """The build gate's ``schema_coverage_below`` at the recorded coverage (it stops below it)."""
    return Threshold("schema_coverage", floor_text(recorded, COVERAGE_PLACES), recorded)

"""The contract every stage module follows.

A stage module (``qlab.stages.build``, ``search``, ``select``, ``plan``, ``execute``, ``learn``) exposes a
``run(ctx, cases, results) -> StageReport`` function (``qlab.stages.context.StageRun``). It:

- works only on the cases of its gate's suites that are not ``done`` yet;
- writes its own object and latency into each CaseResult, and ``fail(stage, reason)`` on failure;
- returns per-suite metrics (``None`` where it has no data) and the stop conditions it saw;
- never writes a file and never prints: ``ctx.log`` is the run log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from qlab.collection.model import Collection
from qlab.engine.base import Engine
from qlab.project.model import Case, Config


@dataclass(frozen=True, slots=True)
class StopHit:
    """A stop condition that fired: which condition, on which cases, and why."""

    condition: str
    case_ids: tuple[str, ...] = ()
    message: str = ""


@dataclass(frozen=True, slots=True)
class GuardResult:
    """An in-run check at a stage boundary (a guard result)."""

    guard: str
    stage: str
    passed: bool
    mode: str = "block"  # block | warn
    message: str = ""
    reason: str = ""  # a failed check's reason code (``qlab.contracts.reasons``), e.g. engine_unreachable
    # what the check is about when a gate runs it more than once (an environment; "requests sent"): with the gate,
    # the stage and the guard it identifies the check, which every output writes once (``qlab.run.guards``)
    subject: str = ""


@dataclass(slots=True)
class StageReport:
    stage: str
    suite_metrics: dict[str, dict[str, float | None]] = field(default_factory=dict)
    metrics: dict[str, float | None] = field(default_factory=dict)  # over all of the gate's cases
    stops: list[StopHit] = field(default_factory=list)
    guards: list[GuardResult] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # e.g. the build readiness report
    duration_ms: float = 0.0


class Learner(Protocol):
    """Suggestions and shadow rank from a run's provisional artifact (``qlab.governance.learning.suggest.
    run_learning``): the learn stage calls it when the run was given one, so the stage never imports the
    governance layer above it."""

    def __call__(
        self,
        artifact: Mapping[str, Any],
        *,
        config: Config,
        collection: Collection,
        engine_factory: Callable[[Collection], Engine],
        cases: Sequence[Case] | None,
        secrets: Sequence[str],
        previous: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]: ...

"""What a caller gives ``qlab.run.runner.run`` and gets back: the options, the replaceable parts, the outcome.

Kept apart from the runner so the run's state (``qlab.run.state``) can name them without importing the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from qlab.adapters.scrub import SecretSet
from qlab.collection.model import Collection
from qlab.engine.base import Engine
from qlab.project.model import Case, Config, Gate
from qlab.run.selection import SelectionSpec
from qlab.run.shard import ShardSpec
from qlab.stages.base import Learner, StageReport
from qlab.stages.context import StageRun


class ProjectLike(Protocol):
    """What ``qlab.project.load_project`` returns, as far as a run needs it."""

    @property
    def config(self) -> Config: ...
    @property
    def cases(self) -> Sequence[Case]: ...
    @property
    def warnings(self) -> Sequence[Any]: ...
    @property
    def case_files(self) -> Sequence[Any]: ...


@dataclass(frozen=True, slots=True)
class RunEvent:
    """Progress of a run, by ``kind``: ``project_loaded`` (the project was read and validated), then
    ``stage_start`` and ``stage_end`` of each gate (``gate``, ``stage``, ``cases``; at the end its ``status`` and
    ``duration_ms``), then ``run_end`` (the run decided, its ``status`` the verdict; the outputs are written
    next). A caller ignores the kinds it does not know: more may come."""

    kind: str
    gate: str = ""
    stage: str = ""
    cases: int = 0
    status: str = ""
    duration_ms: float = 0.0
    run_id: str = ""


BuildFn = Callable[[Config, Gate], "tuple[Collection | None, StageReport]"]
EngineFn = Callable[[Config, Collection], Engine]


@dataclass(frozen=True, slots=True)
class Seams:
    """Replaceable parts (tests use fakes; None means the real module)."""

    build: BuildFn | None = None
    engine: EngineFn | None = None
    stages: Mapping[str, StageRun] = field(default_factory=dict)
    # the pre-run reachability probe (``qlab.run.prerun.probe``: url, timeout -> (answered, detail))
    reach: Callable[[str, float], tuple[bool, str]] | None = None


@dataclass(frozen=True, slots=True)
class RunOptions:
    selection: SelectionSpec = field(default_factory=SelectionSpec)
    shard: ShardSpec | None = None
    durations: Mapping[str, float] | None = None  # case id -> seconds, balances --shard
    # the earlier result artifact: --last-failed selects from it, and the learn gate compares with it
    previous: Mapping[str, Any] | None = None
    # reads the earlier result when the learn gate starts (``previous`` not given): held from then on only, so a
    # large run's search gate does not hold it beside its memo tables
    read_previous: Callable[[], Mapping[str, Any] | None] | None = None
    target_version: str | None = None  # what the run evaluates (--target-version); else qlab.yaml's
    exit_zero: bool = False
    start_servers: bool = True
    log_dir: Path | None = None  # dev-server logs; default: the config's output dir
    # writes the provisional outputs (result, JUnit, summary) and returns their paths: the learn gate's scrub
    # check scans what was really written for the run's secrets; None writes them to a temporary folder. Not
    # called when the run resolved no secret (nothing to look for)
    emit: Callable[[dict[str, Any]], Sequence[Path]] | None = None
    # human decisions on record outside the run (reviewed learning suggestions, release reviews), counted by
    # the scorecard's ``human_acceptance``; run_project reads them (qlab.governance.learning.reviews.decisions)
    reviews: Sequence[str] = ()
    # suggestions and shadow rank at the learn gate (``qlab.governance.learning.suggest.run_learning`` from
    # run_project); None: the learn gate only checks scrubbing
    learner: Learner | None = None
    # the run's secrets: run_project hands the set its caller and files are scrubbed with; None: the run makes
    # its own. The run registers every credential qlab.yaml points at before anything else
    secrets: SecretSet | None = None
    on_event: Callable[[RunEvent], None] = lambda _e: None
    log: Callable[[str], None] = lambda _m: None
    seams: Seams = field(default_factory=Seams)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    artifact: dict[str, Any]
    exit_code: int


class RunCancelled(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM (``qlab.contracts.errors.Terminated``), after its cleanup ran and its dev
    servers stopped: ``outcome`` holds the partial result (status ``cancelled``: the cases that finished, the post-run
    checks over them) and its exit code, 130 or 143. A KeyboardInterrupt still, for a caller that does not
    write it."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__()
        self.outcome = outcome

"""What a stage may read, and what the stages of one run hand to later ones: ``RunContext``.

Built once per run by ``qlab.run.runner`` (and by the learning sandbox, which replays search, select and plan).
Besides the run's inputs (config, collection, engine, the current gate, the log, the secrets), it holds the
state stages pass on, each piece typed and owned by one stage:

- ``answers`` (``EngineAnswers``): the engine's answer to each case's search and selection, made once and
  reused by the later stages of a plan or execute case, and the Plan of each case id, which the execute stage
  runs (``qlab.stages.engine_calls``, ``qlab.stages.plan``);
- ``execute`` (``ExecuteState``): what the execute stage keeps for the run, the HTTP client, the auth resolver
  and the dev servers, until ``ExecuteState.close()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from qlab.adapters.scrub import SecretSet
from qlab.collection.model import Collection
from qlab.contracts.results import CaseResult
from qlab.engine.base import Engine
from qlab.engine.types import Plan, SearchResult, Selection
from qlab.project.model import Case, Config, Gate
from qlab.stages.base import Learner, StageReport

if TYPE_CHECKING:  # a run that executes nothing never imports httpx
    from qlab.adapters import http
    from qlab.execute.auth import AuthResolver

T = TypeVar("T")


@dataclass(slots=True)
class Answers(Generic[T]):
    """One kind of engine answer per CaseResult: each attempt of a repeated case (``Suite.repeat``) has its own."""

    # id(result) -> (result, answer): the result is kept so that a reused id never hands out another's answer
    by_result: dict[int, tuple[CaseResult, T]] = field(default_factory=dict)

    def of(self, result: CaseResult) -> T | None:
        entry = self.by_result.get(id(result))
        return entry[1] if entry is not None and entry[0] is result else None

    def keep(self, result: CaseResult, answer: T) -> None:
        self.by_result[id(result)] = (result, answer)

    def __len__(self) -> int:
        return len(self.by_result)


@dataclass(slots=True)
class EngineAnswers:
    """The engine's answers of the run that later stages reuse."""

    searches: Answers[SearchResult] = field(default_factory=Answers)
    selections: Answers[Selection] = field(default_factory=Answers)
    plans: dict[str, Plan] = field(default_factory=dict)  # case id -> its Plan (read by qlab.execute.plans)


@dataclass(slots=True)
class ExecuteState:
    """What the execute stage keeps for the run (``qlab.stages.execute``)."""

    client: http.Client | None = None  # made on first use, with the widest environment's concurrency
    resolver: AuthResolver | None = None
    servers: ExitStack = field(default_factory=ExitStack)  # the dev servers started (each stops on close)
    # environment name -> {status, url, log} of its dev server, as the stage's details report them
    server_status: dict[str, dict[str, str]] = field(default_factory=dict)
    planned_here: set[str] = field(default_factory=set)  # ids of the cases the stage planned itself
    workers: dict[str, int] = field(default_factory=dict)  # environment name -> threads its cases used

    def close(self) -> None:
        """Stop the dev servers and close the client (after each execute gate, also on Ctrl-C): a later execute
        gate starts them again."""
        servers, client = self.servers, self.client
        self.servers, self.client, self.server_status = ExitStack(), None, {}
        try:
            servers.close()
        finally:
            if client is not None:
                client.close()


@dataclass(slots=True)
class RunContext:
    """What a stage may read, and the state stages hand on (see the module docstring)."""

    config: Config
    collection: Collection
    engine: Engine
    gate: Gate
    log: Callable[[str], None] = lambda _msg: None
    # every secret value the run knows, registered with its parts; stages add what they learn (a token fetched)
    secrets: SecretSet = field(default_factory=SecretSet)
    learner: Learner | None = None  # the learn stage's suggestions; None: the stage only checks scrubbing
    previous: Mapping[str, Any] | None = None  # the run before (the learning signals that compare two runs)
    log_dir: Path | None = None  # the dev servers' logs; None: the config's output folder
    start_servers: bool = (
        True  # False (``qlab run --no-server``): an environment's dev server is never started
    )
    answers: EngineAnswers = field(default_factory=EngineAnswers)
    execute: ExecuteState = field(default_factory=ExecuteState)


class StageRun(Protocol):
    def __call__(
        self, ctx: RunContext, cases: Sequence[Case], results: Mapping[str, CaseResult]
    ) -> StageReport: ...

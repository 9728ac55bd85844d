"""The run log: ``run.log`` beside the result, one line per ``RunOptions.log`` call (``ctx.log`` in a stage),
each scrubbed with the run's secrets and written as it happens, so the learn gate's scrub check can scan it."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import IO

from qlab.adapters import scrub
from qlab.adapters.scrub import SecretSet


class RunLog:
    """The run log of one run, open between ``__enter__`` and ``__exit__``; a call writes one line."""

    def __init__(self, path: Path, secrets: SecretSet | None = None) -> None:
        self.path = path
        self.secrets = secrets if secrets is not None else SecretSet()
        self._handle: IO[str] | None = None

    def __enter__(self) -> RunLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "w", encoding="utf-8")
        return self

    def __call__(self, message: str) -> None:
        if self._handle is not None:
            self._handle.write(scrub.log_line(message.rstrip("\n"), self.secrets) + "\n")
            self._handle.flush()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

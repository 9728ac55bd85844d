"""The error tree. Every error carries the exit code it maps to.

    QlabError (3)                 an internal error: a bug in qlab, the user is asked to report it
    +-- UsageError (2)            a bad command line (unknown option, wrong shard spec, ...)
    +-- InputError (2)            bad input: config, case file, spec, HTTP response, result artifact
    |   +-- ConfigError (2)       qlab.yaml or a case file failed validation; carries every Diagnostic
    |   +-- SpecError (2)         an OpenAPI / Swagger / MCP / Python source cannot be read
    |   +-- DependencyError (2)   an LLM endpoint, engine or spec URL cannot be reached; carries a reason code
    |       +-- SpecFetchError (2)  a spec URL cannot be fetched (also a SpecError)

Signals are no QlabError: Ctrl-C (``KeyboardInterrupt``) exits 130, SIGTERM (``Terminated``, taking the same
path) 143. "Blocked by a gate" (exit 1) is never an exception: it is a verdict carried by the run result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EXIT_PASS = 0
EXIT_BLOCKED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """One located finding: ``file:line:col: $.json.path: message``.

    ``line`` and ``col`` are 1-based; 0 means "unknown" (the whole file).
    """

    file: str
    line: int
    col: int
    json_path: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def render(self) -> str:
        where = self.file if self.line <= 0 else f"{self.file}:{self.line}:{self.col}"
        prefix = "" if self.severity == "error" else "warning: "
        path = f" {self.json_path}:" if self.json_path else ""
        return f"{where}:{path} {prefix}{self.message}"


class QlabError(Exception):
    """Root of qlab's errors; on its own it means an internal error."""

    exit_code: int = EXIT_INTERNAL


class UsageError(QlabError):
    """The command line is wrong."""

    exit_code = EXIT_INPUT


class InputError(QlabError):
    """Some input (config, case, spec, response, artifact) is unusable. The message says where and what to do."""

    exit_code = EXIT_INPUT


class ConfigError(InputError):
    """Validation failed; ``diagnostics`` holds every error of every file, sorted."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))


class SpecError(InputError):
    """An API source (OpenAPI, Swagger, MCP, Python) cannot be read or is invalid."""


class DependencyError(InputError):
    """Something qlab depends on could not be reached; ``reason`` is the reason code a run records for it
    (``llm_unreachable``, ``engine_unreachable``, ``spec_fetch_failed``, ...). Not a verdict on the product.

    Raised while a run judges cases, it becomes that case's failure reason and the run's verdict ERROR
    (exit 2)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class SpecFetchError(SpecError, DependencyError):
    """A spec URL could not be fetched (DNS, connection refused, timeout, HTTP error)."""

    def __init__(self, message: str) -> None:
        DependencyError.__init__(self, message, reason="spec_fetch_failed")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C (``qlab.cli``), so it takes Ctrl-C's path (cleanup, dev
    servers stopped) while whoever catches it can tell which signal it was (a cancelled run records it).

    A run stopped by either signal writes a partial result (status ``cancelled``: the finished cases, the
    post-run checks over them)."""

"""Cleanup steps: run after a case whenever one of its requests was sent — after a pass, a failed assertion, a
timeout or Ctrl-C — each with its outcome recorded (``passed``, ``failed``, ``error``, ``skipped``).

A cleanup step is a tool call or a raw ``method`` + ``path``; its arguments may use ``${captures.name}``. It
gets a fresh ``timeout_sec`` budget (the case may have used its own up). A failed cleanup fails a case that
had not failed yet (``http_error``, or the transport's class), so garbage left in a dev environment shows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from qlab.collection.model import Tool
from qlab.contracts.errors import InputError
from qlab.contracts.results import CaseResult
from qlab.execute.client import Exchange
from qlab.execute.credentials import BaseURL
from qlab.execute.record import STAGE, CaseState
from qlab.execute.request import (
    PreparedRequest,
    RequestError,
    build_request,
    raw_request,
    substitute,
)
from qlab.project.model import Case, CleanupStep, Environment


class CaseRunner(Protocol):
    """What cleanup needs of ``qlab.execute.case.CaseRunner``: its tools and its one-request sender."""

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    def base(self, env: Environment) -> BaseURL: ...

    def send_one(
        self,
        request: PreparedRequest,
        case: Case,
        env: Environment,
        state: CaseState,
        *,
        step: str,
        deadline: float,
    ) -> Exchange | None: ...


def run_cleanup(
    runner: CaseRunner, case: Case, env: Environment, result: CaseResult, state: CaseState
) -> None:
    """Run every cleanup step of ``case`` through ``runner`` and record each outcome in ``state``."""
    deadline = time.monotonic() + case.timeout_sec  # a fresh budget: the case may have timed out
    failures: list[tuple[str, str]] = []
    interrupted: KeyboardInterrupt | None = None
    for index, step in enumerate(case.cleanup):
        label = f"cleanup {index}"
        try:
            request = _request(runner, step, env, state)
        except (RequestError, InputError) as exc:
            state.cleanup.append(
                {
                    "tool": step.tool,
                    "method": step.method,
                    "path": step.path,
                    "outcome": "skipped",
                    "message": str(exc),
                }
            )
            state.events.add("cleanup", index=index, outcome="skipped", message=str(exc))
            failures.append(("http_error", f"{label}: {exc}"))
            continue
        before = len(state.cleanup)
        try:
            exchange = runner.send_one(request, case, env, state, step=label, deadline=deadline)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (``Terminated``): the same one goes on after
            if interrupted is not None:  # pressed again during cleanup: abandon it
                raise
            # Cleanup is not optional: a Ctrl-C during a cleanup request sends it once more, the rest of
            # the cleanup runs, and then the interrupt goes on.
            interrupted = exc
            del state.cleanup[before:]
            exchange = runner.send_one(request, case, env, state, step=label, deadline=deadline)
        record = state.cleanup[-1]
        if exchange is None:
            record["outcome"] = "error"
            failures.append((record["error"], f"{label}: {record['message']}"))
        else:
            ok = exchange.status in step.expect_status if step.expect_status else 200 <= exchange.status < 300
            record["outcome"] = "passed" if ok else "failed"
            if not ok:
                wanted = list(step.expect_status) or "2xx"
                failures.append(
                    (
                        "http_error",
                        f"{label}: {request.method} {record['path']} answered {exchange.status}, expected {wanted}",
                    )
                )
        state.events.add(
            "cleanup",
            index=index,
            method=request.method,
            path=record["path"],
            status=record.get("status"),
            outcome=record["outcome"],
        )
    if failures and result.failure is None:
        result.fail(STAGE, failures[0][0], failures[0][1])
    if interrupted is not None:
        raise interrupted


def _request(runner: CaseRunner, step: CleanupStep, env: Environment, state: CaseState) -> PreparedRequest:
    arguments = substitute(dict(step.arguments), state.captures)
    if step.tool:
        tool = runner.tools.get(step.tool)
        if tool is None:
            raise RequestError(f"cleanup tool {step.tool!r} is not in the collection")
        return build_request(tool, arguments, base_url=runner.base(env).url, headers=env.headers)
    if not step.path:
        raise RequestError("a cleanup step needs a tool, or a method and a path")
    return raw_request(
        step.method or "DELETE", step.path, arguments, base_url=runner.base(env).url, headers=env.headers
    )

"""What an execute case leaves behind: its running state, and the scrubbed ``execute`` record made from it.

The record holds the HTTP status, latency and size of the final response, one entry per plan step (tool,
method, path without secret query values, status), the cleanup outcomes, the runner events, capture names
(never values) and, for a failed case, a scrubbed and truncated excerpt of the response body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from qlab.adapters.scrub import REDACTED, Scrubber, truncate
from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan
from qlab.execute import verdict
from qlab.execute.assertions import ResponseView
from qlab.execute.auth import AuthResolution
from qlab.execute.client import RETRY_STATUSES
from qlab.execute.events import EventLog
from qlab.execute.request import PreparedRequest
from qlab.execute.safety import SafetyVerdict
from qlab.project.model import Environment

STAGE = "execute"


@dataclass(slots=True)
class CaseState:
    """What one case accumulates while it runs."""

    deadline: float
    events: EventLog = field(default_factory=EventLog)
    steps: list[dict[str, Any]] = field(default_factory=list)
    cleanup: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    captures: dict[str, Any] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    # sensitive-field values and cookies: scrubbed from this case's record, not run-wide "secrets"
    secret_values: set[str] = field(default_factory=set)
    sent: bool = False
    auth: AuthResolution | None = None  # the case's auth readiness (all its requests' auth together)
    auths: dict[str, AuthResolution] = field(default_factory=dict)  # tool id -> what its requests send
    final: ResponseView | None = None
    safety: SafetyVerdict | None = None
    claims: dict[str, Any] | None = (
        None  # the in-run claims check of the final response (qlab.execute.claims)
    )


def record(
    plan: Plan, env: Environment, result: CaseResult, state: CaseState, latency: float, *, clean: Scrubber
) -> None:
    """Write ``result.execute`` and the execute latency, and scrub the assertions and the failure message."""
    if result.status == "skipped" and not state.sent:
        result.execute = {"skipped": "not run: interrupted by Ctrl-C"}
        return
    out: dict[str, Any] = {"environment": env.name, "plan_id": plan.plan_id, "steps": state.steps}
    final = state.final
    if final is not None:
        out.update(
            http_status=final.status,
            latency_ms=round(final.latency_ms, 3),
            response_bytes=len(final.body),
            content_type=final.headers.get("content-type", ""),
        )
    if state.safety is not None:
        out["safety"] = state.safety.to_dict()
    if state.captures:
        out["captures"] = sorted(state.captures)  # names only: values may be ids
    if state.cleanup:
        out["cleanup"] = state.cleanup
    out.update(retry_counts([*state.steps, *state.cleanup]))
    if state.claims is not None:
        out["claims"] = state.claims
    out["events"] = state.events.events
    if result.failure is not None and final is not None:
        document = final.json() if final.json_error is None else None
        text = (
            json.dumps(clean(document), ensure_ascii=False)
            if document is not None
            else clean.text(final.text)
        )
        out["response_excerpt"] = truncate(text, verdict.EXCERPT_CHARS)
    if clean.knows_secrets:
        result.execute = clean(out)
    else:
        # No secret value is known yet: only key rules could apply, and steps/events/cleanup records are
        # built here from fixed, non-secret keys — scrub the rest, skip the walk over them (hot path).
        own: dict[str, Any] = {k: out.pop(k) for k in ("steps", "events", "cleanup") if k in out}
        result.execute = {**clean(out), **own}
    result.latency_ms[STAGE] = round(latency, 3)  # as the artifact writes it
    for item in result.assertions:
        item.message, item.expected, item.actual = (
            clean(item.message),
            clean(item.expected),
            clean(item.actual),
        )
    if result.failure is not None:
        result.failure.message = clean(result.failure.message)


def retry_counts(requests: list[dict[str, Any]]) -> dict[str, int]:
    """What the client's retries did (``qlab.execute.client``: 429, 503, connection errors), over the case's
    requests: ``retries`` made, ``retried_requests`` that needed one, and ``recovered_requests`` of those that got
    a usable answer in the end (not 429/503, not a transport error) — the scorecard's ``retry_recovery``."""
    retried = [r for r in requests if int(r.get("attempts") or 1) > 1]
    recovered = [r for r in retried if r.get("status") is not None and r["status"] not in RETRY_STATUSES]
    return {
        "retries": sum(int(r["attempts"]) - 1 for r in retried),
        "retried_requests": len(retried),
        "recovered_requests": len(recovered),
    }


def display_path(request: PreparedRequest, *, secret_params: Mapping[str, str] | None = None) -> str:
    """The request's path and query for results: secret query values (an API key) are redacted."""
    query = [urlencode(request.params)] if request.params else []
    query += [f"{urlencode({k: ''})}{REDACTED}" for k in secret_params or {}]
    return f"{request.path}?{'&'.join(query)}" if query else request.path

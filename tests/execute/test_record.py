"""What the execute record says about the client's retries (the scorecard's retry_recovery reads it), and the
claims check of the final response (the in-run citation guards read it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx

from execute.factory import case, config, context, env, plan, step, tool
from qlab.contracts.results import CaseResult
from qlab.execute.client import make_run_client
from qlab.project.model import ClaimsCheck
from qlab.run.scorecard import case_metrics
from qlab.stages.execute import run


def _run(tmp_path: Path, statuses: list[int], **case_fields: object) -> dict[str, object]:
    """One read-only case against a server that answers ``statuses`` in turn (then the last one forever)."""
    answers = list(statuses)

    def handler(request: httpx.Request) -> httpx.Response:
        status = answers.pop(0) if len(answers) > 1 else answers[0]
        headers = {"Retry-After": "0"} if status in (429, 503) else None
        body = {"claims": [{"text": "D-1 is late", "evidence": ["e1"]}],
                "evidence": [{"id": "e1", "source": "log", "excerpt": "D-1 late"}]}  # fmt: skip
        return httpx.Response(status, headers=headers, json=body)

    read = tool("read", "GET", "/read")
    cfg = config(tmp_path, {"dev": env("http://api.test", retries=2, retry_backoff_sec=0.0)})
    ctx = context(cfg, {"read": read}, plans={"c": plan(step("read"))})
    ctx.execute.client = make_run_client(transport=httpx.MockTransport(handler))
    the_case = dataclasses.replace(case("c"), **case_fields)
    results = {"c": CaseResult("c", the_case.suite, "execute")}
    try:
        run(ctx, [the_case], results)
    finally:
        ctx.execute.close()
    return results["c"].to_dict()


def test_a_503_then_200_is_a_recovered_retry(tmp_path: Path) -> None:
    done = _run(tmp_path, [503, 200])
    execute = done["execute"]
    assert isinstance(execute, dict)
    assert (execute["retries"], execute["retried_requests"], execute["recovered_requests"]) == (1, 1, 1)
    assert done["status"] == "passed" and case_metrics(done)["retry_recovery"] == 1.0


def test_retries_that_run_out_did_not_recover(tmp_path: Path) -> None:
    execute = _run(tmp_path, [503])["execute"]
    assert isinstance(execute, dict)
    assert (execute["retries"], execute["retried_requests"], execute["recovered_requests"]) == (2, 1, 0)


def test_no_retry_counts_zero(tmp_path: Path) -> None:
    execute = _run(tmp_path, [200])["execute"]
    assert isinstance(execute, dict)
    assert (execute["retries"], execute["retried_requests"], execute["recovered_requests"]) == (0, 0, 0)


def test_the_claims_check_is_recorded_with_the_final_response(tmp_path: Path) -> None:
    done = _run(tmp_path, [200], claims=ClaimsCheck(min_evidence_quality=0.5))
    execute = done["execute"]
    assert isinstance(execute, dict)
    claims = execute["claims"]
    assert (claims["claims"], claims["cited"], claims["valid_citations"], claims["passed"]) == (1, 1, 1, True)

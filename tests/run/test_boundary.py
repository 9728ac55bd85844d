"""The in-run checks at a stage boundary: the output_schema check of stage objects (search rows included, as
JSON holds them), the policy checks, and the scrub check reading every byte of a case's objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qlab.contracts.results import CaseResult
from qlab.engine.types import SearchRow
from qlab.run import boundary
from run import fakes

ROW = SearchRow("getHealth", 1, 2.5, {"id": 2.5}, ("health",), {})


def _search(rows: Any, **over: Any) -> dict[str, Any]:
    return {"hit": True, "hit_rank": 1, "top_k": 5, "rows": rows, "query_terms": ["health"], **over}


def _check(*objects: dict[str, Any]) -> tuple[bool, str, boundary.SchemaTally]:
    results = [CaseResult(f"c{i}", "s", "search", search=obj) for i, obj in enumerate(objects)]
    tally = boundary.SchemaTally()
    ok, message = boundary.schema_check("search", results, tally)
    return ok, message, tally


def test_search_objects_are_checked_with_their_rows_and_each_problem_located() -> None:
    ok, message, tally = _check(_search((ROW,)), _search((ROW,), top_k="5"))
    assert not ok and (tally.checked, tally.valid) == (2, 1)
    assert "c1: $.search.top_k: expected integer, got string" in message
    bad_rows: Any = (ROW, SearchRow("getHealth", 0, 1.0), SearchRow(7, 3, 1.0))  # an engine's rows, unchecked
    ok, message, _ = _check(_search(bad_rows))
    assert not ok and "c0: $.search.rows[1].rank: 0 is below 1" in message
    ok, message, _ = _check(_search([ROW, SearchRow("getHealth", 2, 1.0, matched_terms=(3,))]))  # type: ignore[arg-type]
    assert not ok and "c0: $.search.rows[1].matched_terms[0]: expected string, got integer" in message


def test_a_missing_required_member_is_found_next_to_its_rows() -> None:
    bad = _search((ROW,))
    del bad["hit"]
    ok, message, _ = _check(bad)
    assert not ok and "c0: $.search: 'hit' is required" in message


# ---------------------------------------------------------------------------------------------- policy


def _sent(case_id: str, *hops: tuple[str, str]) -> CaseResult:
    """A finished execute case whose requests went to these (method, host) hops."""
    events = [{"event": "request_sent", "method": m, "path": "/x", "host": h} for m, h in hops]
    return CaseResult(case_id, "execute_read", "execute", execute={"events": events})


def test_the_host_allowlist_guard_checks_every_hop(tmp_path: Path) -> None:
    """The fake environment ``dev`` is http://127.0.0.1:9 with allowed_hosts [127.0.0.1]."""
    config = fakes.config(tmp_path)
    cases = {c: fakes.case(c, "execute_read", "execute") for c in ("home", "allowed", "read-off", "post-off")}
    results = [
        _sent("home", ("GET", "127.0.0.1:9")),
        _sent("allowed", ("GET", "127.0.0.1:9"), ("GET", "127.0.0.1:4000")),  # another port, listed host
        _sent("read-off", ("GET", "127.0.0.1:9"), ("GET", "evil.test:80")),  # a read redirected off the list
        _sent("post-off", ("POST", "evil.test:443")),
    ]
    guards = {g.guard: g for g in boundary.policy_checks(config, None, results, cases)}
    allowlist = guards["host_allowlist"]
    assert not allowlist.passed
    assert "read-off: a read redirected to evil.test:80" in allowlist.message
    assert "post-off: POST to evil.test:443, outside allowed_hosts" in allowlist.message
    assert "home" not in allowlist.message.replace("read-off", "") and "allowed:" not in allowlist.message
    clean = boundary.policy_checks(config, None, results[:2], cases)
    assert all(g.passed for g in clean), clean


def test_the_scrub_check_reads_every_byte_of_the_search_rows() -> None:
    """Rule: the second line of defence sees a secret anywhere in a case's search rows (a tool id, a matched term,
    a field name, a correction), with a quote or a backslash in it too (found in its JSON-escaped form)."""
    for secret in ("tok-CANARY-rows-0000", 'tok"CANARY-rows', "tok\\CANARY-rows"):
        for row in (
            SearchRow(f"get{secret}", 1, 1.0),
            SearchRow("getHealth", 1, 1.0, matched_terms=(secret,)),
            SearchRow("getHealth", 1, 1.0, field_scores={secret: 1.0}),
            SearchRow("getHealth", 1, 1.0, corrections={secret: "member"}),
        ):
            results = [
                CaseResult("c0", "s", "search", search=_search((ROW, row))),
                CaseResult("c1", "s", "search", search=_search((ROW,))),
            ]
            guard = boundary.scrub_check("search", results, {secret}, None)
            assert not guard.passed and "c0: secret #1 of 1" in guard.message, (secret, row)
            assert "c1" not in guard.message

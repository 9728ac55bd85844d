"""The in-run checks at a stage boundary: the output_schema check of stage objects whose bulky members were
encoded (EncodedJSON) or encoded after their stage checked them (CheckedJSON)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from qlab import resultschema
from qlab.metrics import STAGE_OBJECTS
from qlab.results import CaseResult, CheckedJSON, EncodedJSON, JSONPack, plain
from qlab.run import boundary
from run import fakes

ROW = {
    "tool_id": "getHealth",
    "rank": 1,
    "score": 2.5,
    "field_scores": {"id": 2.5},
    "matched_terms": ["health"],
    "corrections": {},
}


def _search(rows: Any, **over: Any) -> dict[str, Any]:
    return {"hit": True, "hit_rank": 1, "top_k": 5, "rows": rows, "query_terms": ["health"], **over}


def _check(*objects: dict[str, Any]) -> tuple[bool, str, boundary.SchemaTally]:
    results = [CaseResult(f"c{i}", "s", "search", search=obj) for i, obj in enumerate(objects)]
    tally = boundary.SchemaTally()
    ok, message = boundary.schema_check("search", results, tally)
    return ok, message, tally


def test_checked_rows_are_not_decoded_and_the_rest_is_still_checked() -> None:
    ok, message, tally = _check(_search(CheckedJSON.of([ROW])), _search(CheckedJSON.of([ROW]), top_k="5"))
    assert not ok and (tally.checked, tally.valid) == (2, 1)
    assert "c1: $.search.top_k: expected integer, got string" in message
    # the search stage's packed rows are checked ones too: taken as they are (the stage packs only rows that fit)
    packed = JSONPack(plain_limit=0).add(CheckedJSON.of([{**ROW, "rank": 0}]))
    ok, message, tally = _check(_search(packed), _search(packed, top_k="5"))
    assert not ok and (tally.checked, tally.valid) == (2, 1)
    assert "c1: $.search.top_k: expected integer, got string" in message


def test_encoded_rows_that_do_not_fit_are_decoded_and_located() -> None:
    ok, message, _ = _check(_search(EncodedJSON.of([ROW, {**ROW, "rank": 0}])))
    assert not ok and "c0: $.search.rows[1].rank: 0 is below 1" in message


def test_a_missing_required_member_is_found_next_to_checked_rows() -> None:
    bad = _search(CheckedJSON.of([ROW]))
    del bad["hit"]
    ok, message, _ = _check(bad)
    assert not ok and "c0: $.search: 'hit' is required" in message


def _random_search(rng: random.Random) -> dict[str, Any]:
    pick = rng.random
    row = {
        "tool_id": "t" if pick() > 0.1 else 3,
        "rank": rng.choice([1, 2, 0, True, "1"]) if pick() < 0.3 else 1,
        "score": rng.choice([1.5, 2, None, "x"]) if pick() < 0.3 else 0.5,
        "matched_terms": ["a"] if pick() > 0.1 else [1],
    }
    obj: dict[str, Any] = {
        "hit": rng.choice([True, False, None, 1]),
        "top_k": rng.choice([5, 0, "5"]),
        "rows": [row],
    }
    if pick() < 0.5:
        obj["hit_rank"] = rng.choice([1, None, 0, "x"])
    if pick() < 0.2:
        del obj["top_k"]
    return obj


def test_the_verdict_is_the_plain_checks_on_generated_objects() -> None:
    # the search stage seals rows as CheckedJSON only when the whole object fits, as engine_calls does
    ok_search = resultschema.checker("search")[0]
    rng = random.Random(6)
    for _ in range(500):
        obj = _random_search(rng)
        sealed = dict(obj, rows=(CheckedJSON if ok_search(obj) else EncodedJSON).of(obj["rows"]))
        want = resultschema.problem("search", plain(sealed), "$.search")
        assert boundary._problem("search", sealed) == want, obj


@pytest.mark.parametrize("definition", sorted({d for keys in STAGE_OBJECTS.values() for d in keys}))
def test_stage_objects_check_their_members_independently(definition: str) -> None:
    # what makes checking "the rest" sound: no anyOf/allOf/oneOf that ties the members of a stage object together
    node = resultschema.load()["definitions"][definition]
    assert not {"anyOf", "allOf", "oneOf", "if", "dependencies"} & set(node)


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


def test_the_scrub_check_reads_packed_rows() -> None:
    """Rule: the second line of defence sees a secret inside the search rows the stage keeps packed."""
    secret = "tok-CANARY-rows-0000"
    rows = JSONPack(plain_limit=0).add(CheckedJSON.of([{**ROW, "matched_terms": [secret]}]))
    results = [
        CaseResult("c0", "s", "search", search=_search(rows)),
        CaseResult("c1", "s", "search", search=_search(CheckedJSON.of([ROW]))),
    ]
    guard = boundary.scrub_check("search", results, {secret}, None)
    assert not guard.passed and "c0: secret #1 of 1" in guard.message and "c1" not in guard.message


def test_the_scrub_check_finds_a_secret_with_a_quote_in_rows_kept_as_text() -> None:
    """Rule: a secret with a quote or a backslash inside the rows kept as JSON text (a misspelt query word the
    rows' corrections repeat) is found, packed or not: dumped as a string, the text would be escaped twice and
    match none of the secret's forms."""
    for secret in ('tok"CANARY-rows', "tok\\CANARY-rows"):
        row = {**ROW, "corrections": {secret: "member"}}
        for rows in (CheckedJSON.of([row]), JSONPack(plain_limit=0).add(CheckedJSON.of([row]))):
            results = [
                CaseResult("c0", "s", "search", search=_search(rows)),
                CaseResult("c1", "s", "search", search=_search(CheckedJSON.of([ROW]))),
            ]
            guard = boundary.scrub_check("search", results, {secret}, None)
            assert not guard.passed and "c0: secret #1 of 1" in guard.message, (secret, type(rows))
            assert "c1" not in guard.message

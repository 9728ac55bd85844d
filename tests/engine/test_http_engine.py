"""The http engine against a real service on 127.0.0.1: a team's search/select/plan server (here qlab's own
built-in engine behind the documented JSON contract), and the contract's error paths."""

from __future__ import annotations

import re
from typing import Any

import pytest

from qlab.contracts.errors import InputError
from qlab.engine import wire
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.http_engine import HttpEngine
from qlab.project.model import EngineConfig
from qlab.project.schemas import validate

from .helpers import demo_collection
from .stub_servers import serve

TEAM = BuiltinEngine(demo_collection())


def team_service(path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
    """What a team's engine service does with qlab's requests (each request checked against the schema)."""
    kind = path.strip("/")
    assert not validate(body, "engine-request", definition=f"{kind}_request"), body
    if headers.get("x-team-token") != "tok-123":
        return 401, {"error": "unauthorized"}
    if kind == "search":
        return 200, wire.search_to_dict(TEAM.search(body["query"], k=body["k"]))
    if kind == "select":
        found = wire.search_from_dict(body)
        selection = TEAM.select(
            body["query"], found, entities=body["entities"], llm_target=body["llm_target"]
        )
        return 200, wire.selection_to_dict(selection)
    plan = TEAM.plan(body["query"], body["target"], entities=body["entities"])
    return 200, wire.plan_to_dict(plan)


def engine(url: str, **kw: Any) -> HttpEngine:
    config = EngineConfig(type="http", url=url, headers={"X-Team-Token": "TEAM_TOKEN"}, timeout_sec=5)
    return HttpEngine(config, environ={"TEAM_TOKEN": "tok-123"}, **kw)


def test_search_select_plan_round_trip() -> None:
    with serve(team_service) as (url, seen):
        http_engine = engine(url)
        query = "Find the member delivery detail"
        found = http_engine.search(query, k=5)
        assert found == wire.search_from_dict(wire.search_to_dict(TEAM.search(query, k=5)))  # scores rounded
        selection = http_engine.select(
            query, found, entities={"memberNo": "M-1001"}, llm_target="getMemberDeliveryList"
        )
        assert selection.selected_target == "getMemberDeliveryDetail" and selection.overrode_llm
        plan = http_engine.plan(query, "getMemberDeliveryDetail", entities={"memberNo": "M-1001"})
        assert plan.tools == ("getMemberDeliveryList", "getMemberDeliveryDetail")
        assert plan == TEAM.plan(query, "getMemberDeliveryDetail", entities={"memberNo": "M-1001"})
        http_engine.close()
    assert [path for path, _, _ in seen] == ["/search", "/select", "/plan"]
    assert all(headers["x-team-token"] == "tok-123" for _, headers, _ in seen)


@pytest.mark.parametrize(
    ("reply", "message", "schema_says"),
    [
        (
            {"rows": [{"tool_id": "a", "rank": 1, "score": "high"}]},
            "$.rows[0].score: expected a number, got a string 'high'",
            True,
        ),
        ({"rows": [{"rank": 1, "score": 1}]}, "$.rows[0]: missing required key 'tool_id'", True),
        ({"results": []}, "$: missing required key 'rows'", True),
        ([1, 2], "$: expected an object, got an array", True),
        (
            {"rows": [{"tool_id": "a", "rank": 1, "score": 1, "matched_terms": [3]}]},
            "$.rows[0].matched_terms[0]: expected a string",
            True,
        ),
        # ranks 1..n in order: a rule of the contract JSON Schema cannot express
        ({"rows": [{"tool_id": "a", "rank": 2, "score": 1}]}, "$.rows[0].rank: expected 1", False),
    ],
)
def test_an_invalid_search_reply_names_the_json_path(reply: Any, message: str, schema_says: bool) -> None:
    with (
        serve(lambda p, h, b: (200, reply)) as (url, _),
        pytest.raises(InputError, match=re.escape(message)) as caught,
    ):
        engine(url).search("q", k=3)
    assert f"engine {url}/search reply" in str(caught.value)
    assert bool(validate(reply, "engine-response", definition="search_response")) is schema_says


BAD_SELECTION = {"selected_target": 3, "overrode_llm": False, "reason_codes": []}
BAD_STATUS = {"plan_id": "p", "status": "done"}
FORWARD_BINDING = {
    "plan_id": "p",
    "status": "synthesized",
    "steps": [{"tool_id": "a", "bindings": {"x": {"step": 0, "path": "$.x"}}}],
}


@pytest.mark.parametrize(
    ("reply", "call", "message"),
    [
        (BAD_SELECTION, "select", "$.selected_target: expected a string or null, got an integer 3"),
        (BAD_STATUS, "plan", "$.status: expected one of"),
        (FORWARD_BINDING, "plan", "$.steps[0].bindings.x.step: expected the index of an earlier step"),
    ],
)
def test_invalid_select_and_plan_replies(reply: Any, call: str, message: str) -> None:
    with serve(lambda p, h, b: (200, reply)) as (url, _), pytest.raises(InputError, match=re.escape(message)):
        if call == "select":
            engine(url).select("q", wire.search_from_dict({"rows": []}), entities={}, llm_target=None)
        else:
            engine(url).plan("q", "t", entities={})


def test_transport_status_and_non_json_failures() -> None:
    with (
        serve(lambda p, h, b: (503, {"error": "down"})) as (url, _),
        pytest.raises(InputError, match="answered 503"),
    ):
        engine(url).search("q", k=1)
    with (
        serve(lambda p, h, b: (200, b"<html>")) as (url, _),
        pytest.raises(InputError, match=r"\$: not JSON"),
    ):
        engine(url).search("q", k=1)
    with pytest.raises(InputError, match="ConnectError"):
        engine("http://127.0.0.1:9").search("q", k=1)


def test_configuration_errors_never_show_secret_values() -> None:
    with pytest.raises(InputError, match=r"engine\.url"):
        HttpEngine(EngineConfig(type="http"))
    with pytest.raises(InputError, match="TEAM_TOKEN is not set") as caught:
        HttpEngine(
            EngineConfig(type="http", url="http://127.0.0.1:9", headers={"X-Team-Token": "TEAM_TOKEN"}),
            environ={},
        )
    assert "engine.headers.X-Team-Token" in str(caught.value)

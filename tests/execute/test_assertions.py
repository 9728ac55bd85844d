from __future__ import annotations

import json
from typing import Any

import pytest

from execute.factory import a, demo_tools, tool
from qlab.adapters.http import Headers
from qlab.contracts.errors import InputError
from qlab.execute import assertions
from qlab.execute.assertions import ASSERTIONS, ResponseView, evaluate, names

BODY = {
    "data": [
        {"memberNo": "M-1001", "name": "A", "tier": "premium"},
        {"memberNo": "M-1002", "name": "B", "tier": "plus"},
    ],
    "count": 2,
}


def view(
    body: Any = BODY,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    latency: float = 12.0,
    raw: bytes | None = None,
) -> ResponseView:
    content = raw if raw is not None else json.dumps(body).encode()
    return ResponseView(
        status,
        Headers(headers or {"Content-Type": "application/json"}),
        content,
        latency,
        demo_tools()["listMembers"],
    )


@pytest.mark.parametrize(
    ("assertion", "passed", "message"),
    [
        (a("http_status", in_=[200, 201]), True, ""),
        (a("http_status", in_=[201]), False, "http_status: expected status in [201], actual 200"),
        (a("http_status", range="2xx"), True, ""),
        (
            a("http_status", range=[300, 399]),
            False,
            "http_status: expected status in range [300, 399], actual 200",
        ),
        (a("http_status", equals=200), True, ""),
        (a("json_path_exists", path="$.data[0].memberNo"), True, ""),
        (
            a("json_path_exists", path="$.nope"),
            False,
            "json_path_exists $.nope: expected a value, actual: nothing matched",
        ),
        (a("json_path_equals", path="$.data[1].tier", equals="plus"), True, ""),
        (
            a("json_path_equals", path="$.data[0].tier", equals="plus"),
            False,
            "json_path_equals $.data[0].tier: expected 'plus', actual 'premium'",
        ),
        (
            a("json_path_equals", path="$.missing", equals=1),
            False,
            "json_path_equals $.missing: expected 1, actual None",
        ),
        (a("json_path_matches", path="$.data[*].memberNo", regex=r"^M-\d{4}$"), True, ""),
        (a("json_path_matches", path="$.data[*].tier", regex="^p"), True, ""),
        (
            a("json_path_matches", path="$.data[*].tier", regex="^pl"),
            False,
            "json_path_matches $.data[*].tier: expected a match of '^pl', actual 'premium'",
        ),
        (a("json_path_count", path="$.data", equals=2), True, ""),
        (a("json_path_count", path="$.data[*]", min=1, max=2), True, ""),
        (
            a("json_path_count", path="$.data", min=3),
            False,
            "json_path_count $.data: expected count min 3, actual 2",
        ),
        (a("header_present", name="content-type"), True, ""),
        (
            a("header_present", name="ETag"),
            False,
            "header_present: expected header 'ETag', actual ['content-type']",
        ),
        (a("header_equals", name="Content-Type", equals="application/json"), True, ""),
        (
            a("header_equals", name="Content-Type", equals="text/html"),
            False,
            "header_equals: expected Content-Type: 'text/html', actual 'application/json'",
        ),
        (a("latency_ms_below", ms=50), True, ""),
        (a("latency_ms_below", ms=10), False, "latency_ms_below: expected latency below 10.0, actual 12.0"),
        (a("body_contains", text="M-1002"), True, ""),
        (a("body_contains", text="M-9999"), False, "body_contains: expected body containing 'M-9999'"),
        (a("response_schema"), True, ""),
    ],
)
def test_execute_assertions(assertion: Any, passed: bool, message: str) -> None:
    result = evaluate(assertion, view())
    assert result.passed is passed, result.message
    assert result.message.startswith(message)


def test_failures_carry_expected_actual_and_path() -> None:
    result = evaluate(a("json_path_equals", path="$.count", equals=3), view())
    assert (result.expected, result.actual, result.path) == (3, 2, "$.count")
    assert result.to_dict() == {
        "type": "json_path_equals",
        "passed": False,
        "message": result.message,
        "expected": 3,
        "actual": 2,
        "path": "$.count",
    }


def test_response_schema_against_the_tool() -> None:
    bad = {"data": [{"memberNo": "M-1001", "name": "x", "tier": "gold"}]}
    result = evaluate(a("response_schema"), view(bad))
    assert not result.passed
    assert result.path == "$.data[0].tier"
    assert "'gold' is not one of ['basic', 'plus', 'premium']" in result.message
    missing = evaluate(a("response_schema"), view({"error": "x"}, status=404))
    assert "expected a response schema for status 404 in tool listMembers" in missing.message
    detail = demo_tools()["getMemberDeliveryDetail"]  # allOf with nested refs
    ok = {
        "data": {
            "deliveryId": "D-1",
            "memberNo": "M-1",
            "status": "delivered",
            "events": [{"at": "2026-01-01T00:00:00Z", "status": "x"}],
        }
    }
    assert evaluate(
        a("response_schema"), ResponseView(200, Headers(), json.dumps(ok).encode(), 1, detail)
    ).passed


PET = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}


@pytest.mark.parametrize(
    ("status", "content_type", "body", "passed", "said"),
    [
        (200, "application/json", b'{"name": "Rex"}', True, ""),
        (200, "application/json; charset=utf-8", b"{}", False, "'name' is a required property"),
        (200, "application/xml", b"<pet><name>Rex</name></pet>", True, ""),  # documented XML: not checked
        (200, "text/html", b"<html>login</html>", False, "['application/json', 'application/xml']"),
        (204, "", b"", True, ""),  # documented without a body
        (202, "", b"", True, ""),  # `202: {description}`: no body documented, none sent
        (202, "application/json", b'{"queued": true}', True, ""),
        (200, "application/json", b"", False, "body is empty"),  # a JSON body documented, none sent
        (201, "text/plain", b"created", True, ""),  # `text/*` documented
    ],
)
def test_response_schema_reads_the_content_type_the_spec_documents(
    status: int, content_type: str, body: bytes, passed: bool, said: str
) -> None:
    """Petstore's shapes: JSON and XML for 200, no body for 204 and 202, text for 201."""
    pet = tool(
        "getPet",
        responses={"200": PET, "201": {"type": "string"}, "202": {}, "204": {}},
        media={"200": ("application/json", "application/xml"), "201": ("text/*",), "202": (), "204": ()},
    )
    headers = Headers({"Content-Type": content_type} if content_type else {})
    result = evaluate(a("response_schema"), ResponseView(status, headers, body, 1, pet))
    assert (result.passed, said in result.message) == (passed, True), result.message


def test_nullable_and_boolean_exclusive_bounds_are_understood() -> None:
    t = tool(
        "t",
        responses={
            "200": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "nullable": True, "minimum": 0, "exclusiveMinimum": True}
                },
            }
        },
    )
    ok = ResponseView(200, Headers(), b'{"n": null}', 1, t)
    zero = ResponseView(200, Headers(), b'{"n": 0}', 1, t)
    assert evaluate(a("response_schema"), ok).passed
    assert not evaluate(a("response_schema"), zero).passed


def test_non_json_bodies_fail_json_assertions_only() -> None:
    html = view(raw=b"<html>oops</html>")
    result = evaluate(a("json_path_exists", path="$.data"), html)
    assert not result.passed and "expected a JSON body, actual: body is not valid JSON" in result.message
    assert html.json_error is not None
    assert evaluate(a("body_contains", text="oops"), html).passed


def test_bad_arguments_are_failed_results_not_exceptions() -> None:
    assert "invalid arguments: missing 'path'" in evaluate(a("json_path_exists"), view()).message
    assert "invalid JSONPath" in evaluate(a("json_path_exists", path="$[["), view()).message
    assert (
        "unknown assertion type 'json_path_exist'. Did you mean 'json_path_exists'?"
        in evaluate(a("json_path_exist", path="$"), view()).message
    )


def test_registry() -> None:
    assert names("execute") == tuple(sorted(ASSERTIONS))
    assert len(names("execute")) == 10
    assert assertions.find("http_status") is ASSERTIONS["http_status"] and assertions.find("nope") is None
    with pytest.raises(InputError):
        assertions.get("nope")

"""The demo server answers every operation of demo/openapi.yaml with the documented statuses and shapes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

import servers
from execute.factory import demo_tools
from qlab.demo.data import DEFAULT_TOKEN
from qlab.demo.server import make_server

TOKEN = "t-demo-test"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOOLS = demo_tools()


@pytest.fixture
def api() -> Iterator[httpx.Client]:
    server = make_server("127.0.0.1", 0, token=TOKEN)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.server_address[1]}") as client:
            yield client
    finally:
        server.shutdown()
        server.server_close()


def check(response: httpx.Response, operation: str, status: int, exercised: set[str]) -> Any:
    """Assert the status is the expected one and documented, and the body matches the documented schema."""
    tool = TOOLS[operation]
    assert response.status_code == status, response.text
    assert str(status) in _documented(operation), f"{operation} does not document {status}"
    exercised.add(operation)
    schema = tool.responses.get(str(status))
    if schema is None:
        return None
    body = response.json()
    errors = sorted(Draft202012Validator(schema).iter_errors(body), key=str)
    assert not errors, f"{operation} {status}: {errors[0].message} at {list(errors[0].absolute_path)}"
    return body


def _documented(operation: str) -> set[str]:
    import yaml

    from execute.factory import DEMO_SPEC

    spec = yaml.safe_load(DEMO_SPEC.read_text())
    for item in spec["paths"].values():
        for op in item.values():
            if op["operationId"] == operation:
                return set(op["responses"])
    raise KeyError(operation)


def test_every_operation_matches_the_spec(api: httpx.Client) -> None:
    done: set[str] = set()
    assert check(api.get("/health"), "getHealth", 200, done) == {"status": "ok"}
    members = check(api.get("/members"), "listMembers", 200, done)["data"]
    assert [m["memberNo"] for m in members] == ["M-1001", "M-1002", "M-1003"]
    assert [
        m["memberNo"]
        for m in check(api.get("/members", params={"tier": "plus"}), "listMembers", 200, done)["data"]
    ] == ["M-1002"]
    assert (
        len(check(api.get("/members", params={"name": "park", "limit": 1}), "listMembers", 200, done)["data"])
        == 1
    )
    assert check(api.get("/members/M-1001"), "getMember", 200, done)["data"]["tier"] == "premium"
    check(api.get("/members/M-0000"), "getMember", 404, done)
    deliveries = check(api.get("/members/M-1001/deliveries"), "getMemberDeliveryList", 200, done)["data"]
    assert [d["deliveryId"] for d in deliveries] == ["D-5002", "D-5001"]  # newest first
    assert "events" not in deliveries[0]
    assert (
        check(
            api.get("/members/M-1001/deliveries", params={"status": "in_transit"}),
            "getMemberDeliveryList",
            200,
            done,
        )["data"][0]["deliveryId"]
        == "D-5001"
    )
    check(api.get("/members/M-0000/deliveries"), "getMemberDeliveryList", 404, done)
    assert check(api.get("/members/M-1003/deliveries"), "getMemberDeliveryList", 200, done)["data"] == []
    detail = check(api.get("/members/M-1001/deliveries/D-5001"), "getMemberDeliveryDetail", 200, done)["data"]
    assert detail["address"] and len(detail["events"]) == 2
    check(api.get("/members/M-1002/deliveries/D-5001"), "getMemberDeliveryDetail", 404, done)
    assert len(check(api.get("/deliveries/D-5003/tracking"), "trackDelivery", 200, done)["data"]) == 2
    check(api.get("/deliveries/D-0000/tracking"), "trackDelivery", 404, done)
    # the explanation warms up: 503 with Retry-After on the first request for a delivery, then its claims
    first = api.get("/deliveries/D-5001/explanation")
    check(first, "explainDeliveryStatus", 503, done)
    assert first.headers["Retry-After"] == "0"
    explained = check(api.get("/deliveries/D-5001/explanation"), "explainDeliveryStatus", 200, done)["data"]
    cited = {ref for claim in explained["claims"] for ref in claim["evidence"]}
    assert cited == {item["id"] for item in explained["evidence"]} and len(explained["claims"]) == 3
    check(api.get("/deliveries/D-0000/explanation"), "explainDeliveryStatus", 404, done)
    assert {c["carrierCode"] for c in check(api.get("/carriers"), "listCarriers", 200, done)["data"]} == {
        "CJ",
        "HJ",
        "LT",
    }
    assert len(check(api.get("/orders", params={"memberNo": "M-1001"}), "listOrders", 200, done)["data"]) == 2
    assert check(api.get("/orders/O-9001"), "getOrder", 200, done)["data"]["status"] == "shipped"
    check(api.get("/orders/O-0000"), "getOrder", 404, done)
    assert (
        check(api.get("/me/profile", headers=AUTH), "getMyProfile", 200, done)["data"]["accountId"] == "A-1"
    )
    check(api.get("/me/profile"), "getMyProfile", 401, done)

    # the mutating path: create → read → update → cancel (the cleanup path) → gone
    check(api.post("/orders", json={"memberNo": "M-1002", "items": ["SKU-1"]}), "createOrder", 401, done)
    created = check(
        api.post("/orders", json={"memberNo": "M-1002", "items": ["SKU-1"], "address": "x"}, headers=AUTH),
        "createOrder",
        201,
        done,
    )["data"]
    assert created == {
        "orderId": "O-9005",
        "memberNo": "M-1002",
        "status": "open",
        "items": ["SKU-1"],
        "address": "x",
    }
    assert check(api.get(f"/orders/{created['orderId']}"), "getOrder", 200, done)["data"] == created
    check(api.patch("/orders/O-9005", json={"status": "paid"}), "updateOrder", 401, done)
    assert (
        check(api.patch("/orders/O-9005", json={"status": "paid"}, headers=AUTH), "updateOrder", 200, done)[
            "data"
        ]["status"]
        == "paid"
    )
    check(api.patch("/orders/O-0000", json={}, headers=AUTH), "updateOrder", 404, done)
    check(api.delete("/orders/O-9005"), "cancelOrder", 401, done)
    response = api.delete("/orders/O-9005", headers=AUTH)
    check(response, "cancelOrder", 204, done)
    assert response.content == b""
    check(api.delete("/orders/O-9005", headers=AUTH), "cancelOrder", 404, done)
    check(api.get("/orders/O-9005"), "getOrder", 404, done)

    check(
        api.post("/deliveries/D-5002/reschedule", json={"date": "2026-04-01"}),
        "rescheduleDelivery",
        401,
        done,
    )
    moved = check(
        api.post("/deliveries/D-5002/reschedule", json={"date": "2026-04-01"}, headers=AUTH),
        "rescheduleDelivery",
        200,
        done,
    )
    assert moved["data"]["eta"] == "2026-04-01"

    assert done == set(TOOLS), f"not exercised: {set(TOOLS) - done}"


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/orders", {"memberNo": "M-0000", "items": []}, 400),
        ("POST", "/orders", {"memberNo": "M-1001"}, 400),
        ("POST", "/orders", None, 400),
        ("PATCH", "/orders/O-9001", {"status": "lost"}, 400),
        ("POST", "/deliveries/D-5001/reschedule", {"date": "soon"}, 400),
        ("POST", "/deliveries/D-0000/reschedule", {"date": "2026-04-01"}, 404),
        ("GET", "/nowhere", None, 404),
        ("PUT", "/orders", None, 405),
    ],
)
def test_bad_requests_get_the_error_shape(
    api: httpx.Client, method: str, path: str, body: Any, status: int
) -> None:
    response = api.request(method, path, json=body, headers=AUTH)
    assert response.status_code == status
    assert isinstance(response.json()["error"], str)


def test_invalid_json_body(api: httpx.Client) -> None:
    response = api.post("/orders", content=b"{not json", headers={**AUTH, "Content-Type": "application/json"})
    assert (response.status_code, response.json()) == (400, {"error": "the request body is not valid JSON"})


def test_state_is_per_server_and_thread_safe(api: httpx.Client) -> None:
    import concurrent.futures

    def create(i: int) -> str:
        r = api.post("/orders", json={"memberNo": "M-1001", "items": [f"SKU-{i}"]}, headers=AUTH)
        return str(r.json()["data"]["orderId"])

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(create, range(40)))
    assert len(set(ids)) == 40
    assert len(api.get("/orders").json()["data"]) == 44


def test_cli_token_from_env_and_default() -> None:
    with servers.demo_server(token="env-token-1") as url:
        assert (
            httpx.get(f"{url}/me/profile", headers={"Authorization": "Bearer env-token-1"}).status_code == 200
        )
        wrong = httpx.get(f"{url}/me/profile", headers={"Authorization": f"Bearer {DEFAULT_TOKEN}"})
        assert (wrong.status_code, wrong.headers["WWW-Authenticate"]) == (401, 'Bearer realm="qlab-demo"')
    with servers.demo_server() as url:
        assert (
            httpx.get(f"{url}/me/profile", headers={"Authorization": "Bearer demo-token"}).status_code == 200
        )

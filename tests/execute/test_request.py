from __future__ import annotations

import pytest

from execute.factory import param, step, tool
from qlab.execute.request import RequestError, build_request, raw_request, resolve_arguments, substitute

BASE = "http://127.0.0.1:9/api"


def test_parameters_go_where_the_tool_says() -> None:
    t = tool(
        "getThing",
        "GET",
        "/members/{memberNo}/things",
        params=(
            param("memberNo", "path", required=True),
            param("tier"),
            param("tags"),
            param("X-Trace", "header"),
            param("session", "cookie"),
            param("lang", "cookie"),
        ),
    )
    req = build_request(
        t,
        {
            "memberNo": "M 1/2",
            "tier": "plus",
            "tags": ["a", "b"],
            "X-Trace": 7,
            "session": "s1",
            "lang": "en",
            "extra": 1,
        },
        base_url=BASE,
        headers={"Accept": "application/json"},
    )
    assert req.method == "GET"
    assert req.url == "http://127.0.0.1:9/api/members/M%201%2F2/things"
    assert req.path == "/members/M%201%2F2/things"
    assert req.params == (("tier", "plus"), ("tags", "a"), ("tags", "b"))
    assert req.headers == {"Accept": "application/json", "X-Trace": "7", "Cookie": "session=s1; lang=en"}
    assert req.body_kind == "none"
    assert req.ignored == ("extra",)


def test_json_body_from_body_parameters() -> None:
    t = tool(
        "createOrder",
        "POST",
        "/orders",
        params=(param("memberNo", "body", required=True), param("items", "body")),
        body={"type": "object"},
        content_type="application/json",
    )
    req = build_request(t, {"memberNo": "M-1", "items": ["x"], "flag": True}, base_url=BASE)
    assert (req.body_kind, req.body) == ("json", {"memberNo": "M-1", "items": ["x"]})
    assert req.httpx_kwargs()["json"] == {"memberNo": "M-1", "items": ["x"]}


@pytest.mark.parametrize(
    ("content_type", "kind", "body"),
    [
        ("application/x-www-form-urlencoded", "form", {"a": "1", "b": "true"}),
        ("multipart/form-data; boundary=x", "multipart", {"a": "1", "b": "true"}),
    ],
)
def test_form_bodies(content_type: str, kind: str, body: dict[str, str]) -> None:
    t = tool(
        "post",
        "POST",
        "/f",
        params=(param("a", "body"), param("b", "body")),
        body={"type": "object"},
        content_type=content_type,
    )
    req = build_request(t, {"a": 1, "b": True}, base_url=BASE)
    assert (req.body_kind, req.body) == (kind, body)


def test_whole_body_argument_for_a_non_object_body() -> None:
    t = tool("bulk", "POST", "/bulk", body={"type": "array"}, content_type="application/json")
    req = build_request(t, {"body": [1, 2]}, base_url=BASE)
    assert (req.body_kind, req.body) == ("json", [1, 2])


def test_missing_required_values_are_request_errors() -> None:
    t = tool("getMember", "GET", "/members/{memberNo}", params=(param("memberNo", "path", required=True),))
    with pytest.raises(RequestError, match="needs path parameter 'memberNo'"):
        build_request(t, {}, base_url=BASE)
    post = tool(
        "c", "POST", "/o", params=(param("memberNo", "body", required=True),), body={"type": "object"}
    )
    with pytest.raises(RequestError, match=r"needs body field\(s\) memberNo"):
        build_request(post, {}, base_url=BASE)
    mcp = tool("drop_table", None, None, kind="mcp")
    with pytest.raises(RequestError, match="not an HTTP operation"):
        build_request(mcp, {}, base_url=BASE)


def test_bindings_read_earlier_responses() -> None:
    s = step("getMember", {"memberNo": {"step": 0, "path": "$.data[0].memberNo"}}, tier="plus")
    args = resolve_arguments(s, outputs=[{"data": [{"memberNo": "M-1002"}]}], captures={})
    assert args == {"tier": "plus", "memberNo": "M-1002"}
    with pytest.raises(
        RequestError, match=r"\$.data\[0\].memberNo matched nothing in the response of step 0"
    ):
        resolve_arguments(s, outputs=[{"data": []}], captures={})
    with pytest.raises(RequestError, match="has not run"):
        resolve_arguments(s, outputs=[], captures={})


def test_captures_are_substituted_keeping_types() -> None:
    captures = {"orderId": "O-9005", "n": 3}
    assert substitute("${captures.orderId}", captures) == "O-9005"
    assert substitute("${captures.n}", captures) == 3
    assert substitute(
        {"p": "/orders/${captures.orderId}?n=${captures.n}", "l": ["${captures.n}"]}, captures
    ) == {"p": "/orders/O-9005?n=3", "l": [3]}
    with pytest.raises(
        RequestError, match=r"\$\{captures.missing\} has no value \(captured so far: n, orderId\)"
    ):
        substitute("${captures.missing}", captures)


def test_raw_cleanup_requests() -> None:
    req = raw_request("delete", "/orders/{orderId}", {"orderId": "O-1", "force": True}, base_url=BASE)
    assert (req.method, req.url, req.params, req.body_kind) == (
        "DELETE",
        f"{BASE}/orders/O-1",
        (("force", "true"),),
        "none",
    )
    put = raw_request("PUT", "/orders/{orderId}", {"orderId": "O-1", "status": "open"}, base_url=BASE + "/")
    assert (put.url, put.body_kind, put.body) == (f"{BASE}/orders/O-1", "json", {"status": "open"})
    with pytest.raises(RequestError, match="path parameter 'orderId' has no value"):
        raw_request("DELETE", "/orders/{orderId}", {}, base_url=BASE)

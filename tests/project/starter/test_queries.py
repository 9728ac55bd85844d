"""Search queries of the starter: the spec's words, and method + path where siblings would say the same."""

from __future__ import annotations

from qlab.collection.model import Tool
from qlab.project.starter.queries import base_text, queries, siblings


def tool(
    tool_id: str, method: str, path: str, *, summary: str = "", description: str = "", named: bool = True
) -> Tool:
    return Tool(
        id=tool_id,
        name=tool_id if named else f"{method} {path}",
        family="",
        source="api",
        kind="openapi",
        summary=summary,
        description=description,
        method=method,
        path=path,
    )


HTTPBIN_ANYTHING = [
    tool(
        f"{m.lower()}_anything",
        m,
        "/anything",
        summary="Returns anything passed in request data.",
        named=False,
    )
    for m in ("DELETE", "GET", "PATCH", "POST", "PUT")
]


def test_siblings_get_their_method_and_path_and_no_two_queries_are_equal() -> None:
    tools = [*HTTPBIN_ANYTHING, tool("get_uuid", "GET", "/uuid", summary="Return a UUID4.", named=False)]
    asked = queries(tools)
    assert asked["delete_anything"] == "Returns anything passed in request data (DELETE /anything)"
    assert asked["get_anything"] == "Returns anything passed in request data (GET /anything)"
    assert asked["get_uuid"] == "Return a UUID4."  # a summary of its own stays as written
    assert len(set(asked.values())) == len(tools)
    assert siblings(tools) == 5


def test_siblings_are_found_whatever_the_case_and_the_final_dot() -> None:
    tools = [tool("a", "GET", "/a", summary="List pets."), tool("b", "GET", "/b", summary="list  PETS")]
    assert queries(tools) == {"a": "List pets (GET /a)", "b": "list PETS (GET /b)"}


def test_the_words_come_from_summary_then_description_then_the_id() -> None:
    assert (
        base_text(tool("x", "GET", "/x", summary="Get a [thing](http://x) <b>now</b>")) == "Get a thing now"
    )
    described = tool("y", "GET", "/y", description="Lists items. Pages of 20.\n\nMore.")
    assert base_text(described) == "Lists items."
    assert base_text(tool("getMemberDeliveryList", "GET", "/m")) == "get member delivery list"
    assert base_text(tool("get_members_id", "GET", "/members/{id}", named=False)) == "get members id"


def test_a_long_summary_is_cut_at_a_word() -> None:
    text = base_text(tool("x", "GET", "/x", summary="word " * 80))
    assert len(text) <= 200 and text.endswith("word")

"""Producer fields of a response: paths, wrappers, nouns, depth limits."""

from __future__ import annotations

from qlab.collection.fields import MAX_STEPS, FieldFinder
from qlab.collection.refs import NamedSchema

from .helpers import tool


def test_fields_of_a_wrapped_list() -> None:
    delivery = NamedSchema("demo:components.schemas.Delivery", {
        "type": "object",
        "properties": {"deliveryId": {"type": "string"}, "events": {"type": "array", "items": {
            "type": "object", "properties": {"at": {"type": "string"}}}}},
    })  # fmt: skip
    producer = tool(
        "getMemberDeliveryList",
        path="/members/{memberNo}/deliveries",
        responses={
            "200": {"type": "object", "properties": {"data": {"type": "array", "items": delivery}}},
            "404": {"type": "object", "properties": {"error": {"type": "string"}}},
        },
    )
    fields = {f.path: f for f in FieldFinder().fields(producer)}
    assert set(fields) == {"$.data[*].deliveryId", "$.data[*].events[*].at"}  # error responses yield nothing
    assert fields["$.data[*].deliveryId"].nouns == ("delivery",) and fields["$.data[*].deliveryId"].depth == 1
    assert (
        fields["$.data[*].events[*].at"].nouns == ("event",) and fields["$.data[*].events[*].at"].depth == 2
    )


def test_depth_is_limited_and_scalar_arrays_count() -> None:
    deep: dict = {"type": "string"}  # type: ignore[type-arg]
    for name in ("d", "c", "b", "a"):
        deep = {
            "type": "object",
            "properties": {name: deep, "ids": {"type": "array", "items": {"type": "integer"}}},
        }
    fields = {f.path: f for f in FieldFinder().fields(tool("t", responses={"200": deep}))}
    assert "$.ids[*]" in fields and fields["$.ids[*]"].type == "integer"
    assert max(f.depth for f in fields.values()) <= MAX_STEPS
    assert "$.a.b.c.d" not in fields


def test_recursive_schemas_terminate() -> None:
    node: dict = {"type": "object", "properties": {"id": {"type": "string"}}}  # type: ignore[type-arg]
    node["properties"]["parent"] = node  # a real cycle in memory
    fields = {f.path for f in FieldFinder().fields(tool("t", responses={"200": node}))}
    assert fields == {"$.id"}  # the walk does not enter a schema it is already inside

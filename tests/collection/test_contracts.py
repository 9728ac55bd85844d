"""IO contracts: producers found by name, alias and schema; types checked; deterministic; real specs."""

from __future__ import annotations

from pathlib import Path

from qlab.collection.contracts import canonical, find_contracts, is_reference, type_factor
from qlab.collection.model import MutationClass, Parameter
from qlab.collection.openapi import load_tools

from .helpers import DEMO_SPEC, tool


def _pairs(contracts: tuple) -> dict[tuple[str, str], list[tuple[str, str, str]]]:  # type: ignore[type-arg]
    out: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for c in contracts:
        out.setdefault((c.consumer, c.parameter), []).append((c.producer, c.field_path, c.match))
    return out


def test_demo_list_produces_the_delivery_id_for_the_detail() -> None:
    contracts = find_contracts(load_tools(str(DEMO_SPEC)))
    pairs = _pairs(contracts)
    best = pairs[("getMemberDeliveryDetail", "deliveryId")][0]
    assert best == ("getMemberDeliveryList", "$.data[*].deliveryId", "name")
    top = next(
        c for c in contracts if c.consumer == "getMemberDeliveryDetail" and c.parameter == "deliveryId"
    )
    assert top.score == 1.0  # name match, read-only producer, list -> detail path, same family
    assert pairs[("getMemberDeliveryDetail", "memberNo")][0][:2] == ("listMembers", "$.data[*].memberNo")
    assert pairs[("getOrder", "orderId")][0][:2] == ("listOrders", "$.data[*].orderId")
    assert all(c.producer != "cancelOrder" for c in contracts)  # destructive tools never produce
    assert all(c.producer != c.consumer for c in contracts)
    assert len({(c.consumer, c.parameter) for c in contracts}) == 11


def test_an_id_field_of_the_entity_feeds_a_qualified_parameter() -> None:
    delivery = {"type": "object", "title": "Delivery", "properties": {"id": {"type": "string"}}}
    producer = tool(
        "listDeliveries",
        path="/deliveries",
        responses={"200": {"type": "object", "properties": {"data": {"type": "array", "items": delivery}}}},
    )
    consumer = tool(
        "track", path="/tracking", params=[Parameter("deliveryId", "query", True, {"type": "string"})]
    )
    (contract,) = find_contracts([producer, consumer])
    assert (contract.producer, contract.field_path, contract.match) == (
        "listDeliveries",
        "$.data[*].id",
        "schema",
    )


def test_a_bare_id_parameter_takes_the_noun_of_its_path_segment(shared_data: Path) -> None:
    tools = load_tools(str(shared_data / "restbench" / "specs" / "spotify_oas.json"))
    pairs = _pairs(find_contracts(tools))
    producers = [p for p, _path, _m in pairs[("get-an-album", "id")]]
    assert "get-an-artists-albums" in producers and "get-new-releases" in producers
    playlist = pairs[("get-playlist", "playlist_id")][0]
    assert playlist[:2] == ("get-a-list-of-current-users-playlists", "$.items[*].id")


def test_alias_suffixes_match() -> None:
    producer = tool(
        "listMembers",
        responses={"200": {"type": "object", "properties": {"memberNumber": {"type": "integer"}}}},
    )
    consumer = tool(
        "getMember", path="/m", params=[Parameter("member_no", "query", True, {"type": "integer"})]
    )
    (contract,) = find_contracts([producer, consumer])
    assert (contract.match, contract.field_path) == ("alias", "$.memberNumber")
    assert canonical("memberNumber") == canonical("memberNr") == "memberno"


def test_incompatible_types_and_value_inputs_get_no_producer() -> None:
    producer = tool("list", responses={"200": {"type": "object", "properties": {
        "orderId": {"type": "object"}, "limit": {"type": "integer"}}}})  # fmt: skip
    consumer = tool("get", path="/o", params=[
        Parameter("orderId", "query", True, {"type": "string"}),
        Parameter("limit", "query", True, {"type": "integer"}),
    ])  # fmt: skip
    assert find_contracts([producer, consumer]) == ()
    assert not is_reference(Parameter("limit", "query", True)) and is_reference(Parameter("x", "path", True))
    assert not is_reference(Parameter("name", "body", True)) and is_reference(
        Parameter("device_id", "query", True)
    )
    assert type_factor("string", "integer") == 0.9 and type_factor("integer", "string") == 0.0


def test_mutating_producers_rank_below_read_only_ones() -> None:
    body = {"200": {"type": "object", "properties": {"orderId": {"type": "string"}}}}
    create = tool("createOrder", method="POST", responses=body, mutation=MutationClass.MUTATING)
    read = tool("readOrder", responses=body)
    consumer = tool("getOrder", path="/x", params=[Parameter("orderId", "query", True, {"type": "string"})])
    assert [c.producer for c in find_contracts([create, read, consumer])] == ["readOrder", "createOrder"]


def test_kubernetes_contracts_are_deterministic(shared_data: Path) -> None:
    tools = load_tools(str(shared_data / "openapi-specs" / "kubernetes" / "swagger.json"))
    first = find_contracts(tools)
    assert first == find_contracts(tools)
    pairs = _pairs(first)
    assert pairs[("readCoreV1NamespacedPod", "name")][0][:2] == (
        "listCoreV1NamespacedPod",
        "$.items[*].metadata.name",
    )
    # /namespaces/{namespace}: the namespace's own name, not the `metadata.namespace` some object carries
    assert pairs[("readCoreV1NamespacedPod", "namespace")][0][:2] == (
        "listCoreV1Namespace",
        "$.items[*].metadata.name",
    )
    assert max(len(v) for v in pairs.values()) <= 3

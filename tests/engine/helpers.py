"""Tools, collections and cases built by hand for the engine, stage and command tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qlab.collection.model import Collection, IOContract, MutationClass, Parameter, Tool

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"


def param(name: str, *, required: bool = True, location: str = "path", **schema: Any) -> Parameter:
    return Parameter(name, location, required, schema or {"type": "string"})  # type: ignore[arg-type]


def tool(
    tool_id: str,
    *,
    summary: str = "",
    description: str = "",
    method: str = "GET",
    path: str = "",
    params: tuple[Parameter, ...] = (),
    aliases: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    mutation: MutationClass = MutationClass.READ_ONLY,
    name: str | None = None,
) -> Tool:
    return Tool(
        id=tool_id,
        name=name if name is not None else tool_id,
        family=tags[0] if tags else "",
        source="test",
        kind="openapi",
        summary=summary,
        description=description,
        method=method,
        path=path or f"/{tool_id}",
        parameters=params,
        aliases=aliases,
        tags=tags,
        mutation=mutation,
    )


MEMBER_NO = param("memberNo")
DELIVERY_ID = param("deliveryId")

LIST = tool(
    "getMemberDeliveryList",
    summary="List a member's deliveries",
    description="Lists the deliveries of one member, newest first.",
    path="/members/{memberNo}/deliveries",
    params=(MEMBER_NO,),
    tags=("deliveries",),
)
DETAIL = tool(
    "getMemberDeliveryDetail",
    summary="Get member delivery detail",
    description="Returns the full detail of one delivery of a member, with address and tracking events.",
    path="/members/{memberNo}/deliveries/{deliveryId}",
    params=(MEMBER_NO, DELIVERY_ID),
    tags=("deliveries",),
)
TRACK = tool(
    "trackDelivery",
    summary="Track a delivery",
    description="Returns the carrier's tracking events for a delivery.",
    path="/deliveries/{deliveryId}/tracking",
    params=(DELIVERY_ID,),
    aliases=("where is my parcel",),
    tags=("deliveries",),
)
RESCHEDULE = tool(
    "rescheduleDelivery",
    summary="Reschedule a delivery",
    description="Moves a scheduled delivery to a new date.",
    method="POST",
    path="/deliveries/{deliveryId}/reschedule",
    params=(DELIVERY_ID, param("date", location="body", format="date")),
    mutation=MutationClass.MUTATING,
    tags=("deliveries",),
)
GET_ORDER = tool(
    "getOrder",
    summary="Get an order",
    description="Returns one order by its identifier.",
    path="/orders/{orderId}",
    params=(param("orderId"),),
    tags=("orders",),
)
CANCEL_ORDER = tool(
    "cancelOrder",
    summary="Cancel an order",
    description="Deletes one order by its identifier.",
    method="DELETE",
    path="/orders/{orderId}",
    params=(param("orderId"),),
    mutation=MutationClass.DESTRUCTIVE,
    tags=("orders",),
)
TOOLS = (LIST, DETAIL, TRACK, RESCHEDULE, GET_ORDER, CANCEL_ORDER)
CONTRACTS = (
    IOContract(
        "getMemberDeliveryList", "$.data[*].deliveryId", "getMemberDeliveryDetail", "deliveryId", "name", 1.0
    ),
    IOContract(
        "rescheduleDelivery", "$.data.deliveryId", "getMemberDeliveryDetail", "deliveryId", "name", 0.9
    ),
    IOContract("getMemberDeliveryList", "$.data[*].deliveryId", "trackDelivery", "deliveryId", "name", 0.85),
)


def collection(tools: tuple[Tool, ...] = TOOLS, contracts: tuple[IOContract, ...] = CONTRACTS) -> Collection:
    return Collection(tools=tools, contracts=contracts, digest="sha256:test")


def demo_collection() -> Collection:
    """The bundled demo API, with the IO contracts the collection layer finds for it."""
    from qlab.collection.contracts import find_contracts
    from qlab.collection.openapi import load_tools

    tools = load_tools(str(DEMO_SPEC), source_name="demo")
    return Collection(tuple(tools), tuple(find_contracts(tools)), digest="sha256:demo")

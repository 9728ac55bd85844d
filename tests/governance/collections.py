"""A small collection and an engine factory over the built-in search index, for the learning tests."""

from __future__ import annotations

from qlab.collection.model import Collection, Parameter, Tool
from qlab.engine.index import SearchIndex
from qlab.project.model import Case, Origin


def tool(tool_id: str, summary: str, family: str, **extra: object) -> Tool:
    return Tool(
        id=tool_id, name=tool_id, family=family, source="demo", kind="openapi", summary=summary, **extra
    )  # type: ignore[arg-type]


def demo_collection() -> Collection:
    return Collection(
        tools=(
            tool("getMemberDeliveryDetail", "Get the delivery detail of a member", "deliveries",
                 parameters=(Parameter("memberNo", "path", True),)),
            tool("getMemberDeliveryList", "List the deliveries of a member", "deliveries"),
            tool("getLockerList", "List parcel lockers near an address", "lockers"),
            tool("getOrderList", "List orders", "orders"),
            tool("deleteOrder", "Delete an order", "orders"),
        ),
        digest="sha256:demo",
    )  # fmt: skip


class IndexEngine:
    """The search half of an engine, over the built-in index (what shadow rank needs)."""

    name = "index"

    def __init__(self, collection: Collection) -> None:
        self.index = SearchIndex(collection.tools)
        self.collection = collection

    def search(self, query: str, *, k: int):  # type: ignore[no-untyped-def]
        return self.index.search(query, k=k)


def case(
    case_id: str, query: str, expected: str, *, suite: str = "search_core", mode: str = "search"
) -> Case:
    return Case(
        id=case_id,
        mode=mode,  # type: ignore[arg-type]
        query=query,
        suite=suite,
        file=f"gates/{suite}/{case_id}.yaml",
        origin=Origin(f"gates/{suite}/{case_id}.yaml", 1, 1),
        expected_target=expected,
    )

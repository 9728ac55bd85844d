"""Plan synthesis: every status, entity binding, IO-contract steps (list -> detail), cycles, depth, safety."""

from __future__ import annotations

from qlab.collection.model import IOContract, MutationClass
from qlab.engine import planner
from qlab.engine.planner import MAX_DEPTH, first_item, synthesize

from .helpers import CONTRACTS, TOOLS, collection, demo_collection, param, tool


def test_demo_seed_plan_calls_the_list_first_and_binds_the_delivery_id() -> None:
    plan = synthesize("getMemberDeliveryDetail", {"memberNo": "M-1001"}, collection=demo_collection())
    assert plan.status == "synthesized"
    assert plan.reason is None
    assert plan.tools == ("getMemberDeliveryList", "getMemberDeliveryDetail")
    first, second = plan.steps
    assert dict(first.arguments) == {"memberNo": "M-1001"}
    assert dict(second.arguments) == {"memberNo": "M-1001"}
    assert {k: dict(v) for k, v in second.bindings.items()} == {
        "deliveryId": {"step": 0, "path": "$.data[0].deliveryId"}
    }
    assert plan.user_input_slots == ()
    assert "getMemberDeliveryDetail.memberNo <- entity memberNo (exact)" in plan.diagnostics
    assert any("rescheduleDelivery not used" in note and "mutating" in note for note in plan.diagnostics)


def test_synthesized_with_every_input_provided() -> None:
    plan = synthesize(
        "getMemberDeliveryDetail", {"memberNo": "M-1", "deliveryId": "D-1"}, collection=collection()
    )
    assert (plan.status, plan.tools) == ("synthesized", ("getMemberDeliveryDetail",))


def test_needs_input_when_nothing_can_fill_a_required_input() -> None:
    plan = synthesize("getMemberDeliveryDetail", {}, collection=collection())
    assert plan.status == "needs_input"
    assert plan.reason == "required_fields_unsatisfied"
    assert [(s.tool_id, s.parameter, s.location, s.reason) for s in plan.user_input_slots] == [
        ("getMemberDeliveryDetail", "memberNo", "path", "no_entity_or_producer"),
        ("getMemberDeliveryDetail", "deliveryId", "path", "no_entity_or_producer"),
    ]
    # the list could produce deliveryId, but it needs memberNo itself: not used
    assert any("getMemberDeliveryList not used" in note and "memberNo" in note for note in plan.diagnostics)
    assert plan.tools == ("getMemberDeliveryDetail",)


def test_a_wrongly_typed_entity_leaves_a_slot_that_says_so() -> None:
    t = tool("getPage", params=(param("page", location="query", type="integer"),))
    plan = synthesize("getPage", {"page": "first"}, collection=collection((t,), ()))
    assert plan.status == "needs_input"
    assert plan.user_input_slots[0].reason == "entity_type_mismatch"
    assert any("does not fit: expected an integer" in note for note in plan.diagnostics)


def test_failed_for_an_unknown_target_with_a_suggestion() -> None:
    plan = synthesize("getMemberDeliveryDetial", {}, collection=collection())
    assert (plan.status, plan.reason, plan.steps) == ("failed", "target_unknown", ())
    assert "Did you mean 'getMemberDeliveryDetail'?" in plan.diagnostics[0]


def test_failed_without_a_target() -> None:
    plan = synthesize(None, {"memberNo": "M"}, collection=collection())
    assert (plan.status, plan.reason) == ("failed", "no_target")


def test_optional_parameters_take_entities_but_never_need_them() -> None:
    t = tool("listMembers", params=(param("tier", required=False, location="query", enum=["basic", "plus"]),))
    plan = synthesize("listMembers", {"tier": "plus", "unused": 1}, collection=collection((t,), ()))
    assert plan.status == "synthesized"
    assert dict(plan.steps[0].arguments) == {"tier": "plus"}
    assert "entity unused fills no parameter of the plan" in plan.diagnostics


def test_normalized_and_fuzzy_names_fill_parameters() -> None:
    plan = synthesize("trackDelivery", {"delivery_id": "D-9"}, collection=collection())
    assert dict(plan.steps[-1].arguments) == {"deliveryId": "D-9"}
    assert "trackDelivery.deliveryId <- entity delivery_id (normalized)" in plan.diagnostics
    fuzzy = synthesize("trackDelivery", {"deliveryIdd": "D-9"}, collection=collection())
    assert dict(fuzzy.steps[-1].arguments) == {"deliveryId": "D-9"}
    assert any("(fuzzy 0.9" in note for note in fuzzy.diagnostics)


def test_mutating_producers_are_never_added() -> None:
    only_mutating = tuple(c for c in CONTRACTS if c.producer == "rescheduleDelivery")
    plan = synthesize(
        "getMemberDeliveryDetail", {"memberNo": "M"}, collection=collection(TOOLS, only_mutating)
    )
    assert plan.status == "needs_input"
    assert plan.user_input_slots[0].parameter == "deliveryId"


def test_producer_chains_recurse_and_stop_at_cycles() -> None:
    a = tool("a", params=(param("aId"),))
    b = tool("b", params=(param("bId"),))
    c = tool("c")
    chain = (
        IOContract("b", "$.items[*].aId", "a", "aId", "name"),
        IOContract("c", "$.items[*].bId", "b", "bId", "name"),
        IOContract("a", "$.bId", "b", "bId", "name", 2.0),  # a cycle back to a: must be skipped
    )
    plan = synthesize("a", {}, collection=collection((a, b, c), chain))
    assert (plan.status, plan.tools) == ("synthesized", ("c", "b", "a"))
    assert [{k: dict(v) for k, v in s.bindings.items()} for s in plan.steps] == [
        {},
        {"bId": {"step": 0, "path": "$.items[0].bId"}},
        {"aId": {"step": 1, "path": "$.items[0].aId"}},
    ]


def test_depth_limit() -> None:
    tools = [tool(f"t{i}", params=(param(f"p{i}"),)) for i in range(MAX_DEPTH + 2)]
    tools.append(tool(f"t{MAX_DEPTH + 2}"))
    contracts = tuple(
        IOContract(f"t{i + 1}", f"$.p{i}", f"t{i}", f"p{i}", "name") for i in range(MAX_DEPTH + 2)
    )
    plan = synthesize("t0", {}, collection=collection(tuple(tools), contracts))
    assert plan.status == "needs_input"
    assert any(f"depth limit {MAX_DEPTH}" in note for note in plan.diagnostics)
    assert len(plan.steps) <= MAX_DEPTH + 1


def test_the_shortest_of_equally_good_producers_wins() -> None:
    long_way = tool("detailFirst", params=(param("x"),))
    short_way = tool("listAll")
    target = tool("target", params=(param("id"),))
    contracts = (
        IOContract("detailFirst", "$.id", "target", "id", "name", 0.8),
        IOContract("listAll", "$[*].id", "target", "id", "name", 0.8),
        IOContract("listAll", "$[*].x", "detailFirst", "x", "name", 0.8),
    )
    plan = synthesize("target", {}, collection=collection((long_way, short_way, target), contracts))
    assert plan.tools == ("listAll", "target")


def test_plan_id_is_deterministic_and_depends_on_the_steps() -> None:
    col = collection()
    one = synthesize("trackDelivery", {"deliveryId": "D-1"}, collection=col)
    assert one.plan_id == synthesize("trackDelivery", {"deliveryId": "D-1"}, collection=col).plan_id
    assert one.plan_id != synthesize("trackDelivery", {"deliveryId": "D-2"}, collection=col).plan_id
    assert one.plan_id.startswith("plan-") and len(one.plan_id) == 21


def test_first_item() -> None:
    assert first_item("$.data[*].deliveryId") == "$.data[0].deliveryId"
    assert first_item("$.a[*].b[*].c") == "$.a[0].b[0].c"
    assert first_item("$.data.id") == "$.data.id"


def test_destructive_target_is_still_planned() -> None:
    """Safety is the execute stage's business: a plan for a destructive target is synthesized."""
    t = tool("deleteThing", method="DELETE", params=(param("thingId"),), mutation=MutationClass.DESTRUCTIVE)
    plan = planner.synthesize("deleteThing", {"thingId": "T"}, collection=collection((t,), ()))
    assert plan.status == "synthesized"

"""An API's collections and each operation's shape, read from its paths."""

from __future__ import annotations

from qlab.engine.shape import COLLECTION, ITEM, collections, shape, target

PATHS = (
    "/api/v1/namespaces/{namespace}/pods",
    "/api/v1/namespaces/{namespace}/pods/{name}",
    "/api/v1/namespaces/{namespace}/pods/{name}/log",
    "/api/v1/pods",
    "/user",
    "/users/{userId}/settings/cse/keypairs/{keyPairId}:disable",
)


def test_a_collection_is_a_name_some_path_follows_with_a_parameter() -> None:
    assert collections(PATHS) == {"namespaces", "pods", "users"}  # not "keypairs": an action follows it


def test_an_operation_addresses_a_collection_one_item_or_neither() -> None:
    names = collections(PATHS)
    assert [shape(path, names) for path in PATHS] == [COLLECTION, ITEM, None, COLLECTION, None, None]
    assert shape("", names) is None


def test_an_operation_targets_its_last_name_and_the_item_an_action_acts_on() -> None:
    """The target: the last literal segment; an action or sub-resource of one item also names that item's
    collection; a path without a literal segment has none."""
    names = collections((*PATHS, "/instances/{instance}", "/instances/{instance}/setName"))
    assert [target(path, names) for path in PATHS] == [
        "pods",
        "pods",
        "pods log",
        "pods",
        "user",
        "keypairs disable",
    ]
    compute = "/projects/{project}/zones/{zone}/instances/{instance}/setName"
    assert target(compute, names) == "instances setName"
    assert target("/api/v1/namespaces/{namespace}/pods/{name}", frozenset()) == "pods"
    assert target("/{id}/run", names) == "run"
    assert target("/", names) == target("/{a}/{b}", names) == ""

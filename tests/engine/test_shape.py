"""An API's collections and each operation's shape, read from its paths."""

from __future__ import annotations

from qlab.engine.shape import COLLECTION, ITEM, collections, shape

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

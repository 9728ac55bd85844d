"""Name helpers: normalization, tokens, derived ids, singulars, JSONPath rendering."""

from __future__ import annotations

import pytest

from qlab.collection import names


@pytest.mark.parametrize("raw", ["deliveryId", "delivery_id", "Delivery-ID", "delivery.id", "DELIVERY ID"])
def test_normalize_ignores_case_and_separators(raw: str) -> None:
    assert names.normalize(raw) == "deliveryid"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("getMemberNo", ("get", "member", "no")),
        ("device_id", ("device", "id")),
        ("HTTPStatusCode", ("http", "status", "code")),
        ("io.k8s.api.core.v1.Pod", ("io", "k", "8", "s", "api", "core", "v", "1", "pod")),
    ],
)
def test_tokens(raw: str, expected: tuple[str, ...]) -> None:
    assert names.tokens(raw) == expected


def test_derived_id_depends_only_on_method_and_path() -> None:
    assert names.derived_id("GET", "/members/{memberNo}/deliveries") == "get_members_memberNo_deliveries"
    assert names.derived_id("post", "/") == "post_root"
    assert names.derived_id("DELETE", "/a-b/{c.d}") == "delete_a_b_c_d"


def test_unique_appends_a_counter() -> None:
    taken = {"x", "x_2"}
    assert names.unique("x", taken) == "x_3" and "x_3" in taken
    assert names.unique("y", taken) == "y"


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("deliveries", "delivery"),
        ("pets", "pet"),
        ("addresses", "address"),
        ("status", "status"),
        ("statuses", "status"),
        ("boxes", "box"),
    ],
)
def test_singular(plural: str, singular: str) -> None:
    assert names.singular(plural) == singular


def test_paths_and_pointers() -> None:
    assert names.json_path(["paths", "/pets", "get", "parameters", 0, "$ref"]) == (
        "$.paths['/pets'].get.parameters[0]['$ref']"
    )
    assert names.json_path(["data", "[*]", "id"]) == "$.data[*].id"
    assert names.pointer_parts("/a~1b/c~0d") == ["a/b", "c~d"]
    assert names.pointer(["a/b", "c~d"]) == "/a~1b/c~0d"
    assert names.segment_before("/albums/{id}/tracks", "id") == "albums"
    assert names.segment_before("/{x}", "x") is None
    assert names.static_segments("/members/{m}/deliveries") == ["members", "deliveries"]
    assert names.schema_noun("#/definitions/io.k8s.api.core.v1.Pod") == "Pod"

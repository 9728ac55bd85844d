"""The block YAML writer: whatever it writes parses back (with the project's reader) to the same data."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qlab.project.yaml_emit import dump, scalar
from qlab.project.yamlio import parse_yaml

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
    | st.sampled_from(
        ["true", "no", "null", "~", "1.5", "0x1F", "a: b", "- x", "#c", " lead", "trail ", "2025-07-20", ""]
    )
)
DATA = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), DATA, min_size=1, max_size=5))
def test_round_trip(data: dict[str, Any]) -> None:
    assert parse_yaml(dump(data), "x.yaml").data == data


def test_plain_where_safe_and_quoted_where_not() -> None:
    assert scalar("shipment status") == "shipment status"
    assert scalar("yes") == '"yes"'
    assert scalar("D-5003") == "D-5003"
    assert scalar("2025-07-20") == '"2025-07-20"'
    assert dump({"id": "reg-1", "tags": ["regression"], "entities": {}}) == (
        "id: reg-1\ntags:\n  - regression\nentities: {}\n"
    )

from __future__ import annotations

import math

import pytest

from qlab.project.scalars import plain_scalar


@pytest.mark.parametrize(
    ("text", "value"),
    [("", None), ("Null", None), ("TRUE", True), ("false", False), ("Yes", "Yes"), ("+7", 7), ("-0", 0),
     ("0x1F", 31), ("0o7", 7), ("3.", 3.0), ("-1.5e-3", -0.0015), ("1e", "1e"), ("v1.2", "v1.2"), (".", ".")],
)  # fmt: skip
def test_core_schema(text: str, value: object) -> None:
    assert plain_scalar(text) == value
    assert type(plain_scalar(text)) is type(value)


def test_infinities_and_nan() -> None:
    assert plain_scalar("+.inf") == math.inf
    assert plain_scalar("-.INF") == -math.inf
    assert math.isnan(plain_scalar(".NaN"))

from __future__ import annotations

from qlab.execute import schema_check
from qlab.execute.schema_check import validate


def test_bodies_against_a_schema() -> None:
    schema = {"type": "object", "properties": {"tier": {"enum": ["basic", "plus"]}}, "required": ["tier"]}
    assert validate({"tier": "plus"}, schema) == []
    issues = validate({"data": 1}, schema)
    assert [issue.render() for issue in issues] == ["$: 'tier' is a required property"]


def test_the_validator_memo_stays_bounded() -> None:
    """The validators of every response schema met are kept for reuse, but not for good: one process running
    the collections of many runs must not hold all their schemas. A schema dropped from the memo is checked
    the same way."""
    schema_check._VALIDATORS.clear()
    for n in range(4000):
        schema = {"type": "object", "properties": {"n": {"maximum": n}}}
        assert validate({"n": n}, schema) == []
        assert validate({"n": n + 1}, schema)
    assert len(schema_check._VALIDATORS) <= 2048
    first = {"type": "object", "properties": {"n": {"maximum": 0}}}
    assert [issue.path for issue in validate({"n": 1}, first)] == ["$.n"]

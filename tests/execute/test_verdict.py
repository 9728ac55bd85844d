"""``qlab.execute.verdict``: the sensitive values a document holds."""

from __future__ import annotations

from qlab.execute.verdict import sensitive_values


def test_sensitive_values_under_any_spelling_and_long_enough_to_scrub_by_value() -> None:
    """Every value under a sensitive key, as text; one of fewer than 4 characters is left to the key rule: by value
    ``userId: 1`` took the ``1`` of ``/posts/1`` and an attempt number from an execute record."""
    document = {
        "userId": 1,
        "data": [{"USER-ID": 90817.0, "email": "a@b.co"}, {"user_id": "ab", "name": "Hana"}],
        "flag": {"email": True},
    }
    assert sensitive_values(document, ["userId", "email"]) == {"90817", "a@b.co"}
    assert sensitive_values(document, []) == set()

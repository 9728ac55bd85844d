"""The ``content_type`` assertion type: the response's media type, without parameters such as ``charset``.

assertions:
  - {type: content_type, equals: application/json}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.contracts.results import AssertionResult
from qlab.execute.assertions import ResponseView


class ContentType:
    name = "content_type"  # the ``type`` cases write; the entry point's name
    stage = "execute"  # plugin types check the response of a case's plan
    needs_json = False  # True would fail a non-JSON body as invalid_json before ``check`` runs
    schema = {  # the arguments, as qlab validate checks them (``type`` is added)
        "description": "the response's media type, without parameters such as charset.",
        "properties": {
            "equals": {
                "type": "string",
                "minLength": 1,
                "description": "The media type, e.g. application/json.",
            }
        },
        "required": ["equals"],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return [] if isinstance(args.get("equals"), str) else ["needs 'equals', a media type"]

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        expected = str(args["equals"]).lower()
        actual = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if actual == expected:
            return AssertionResult(self.name, True, "", expected, actual)
        message = f"{self.name}: expected {expected!r}, actual {actual or 'no Content-Type'!r}"
        return AssertionResult(self.name, False, message, expected, actual or None)

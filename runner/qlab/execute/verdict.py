"""How a finished exchange becomes exactly one failure class (or none), and what a case records of a response.

Order of precedence for the final response of a plan:

1. 401/403 that no ``http_status`` assertion of the case accepts → ``auth_failed``
2. another status >= 400 that no ``http_status`` assertion accepts → ``http_error``
3. the first failed assertion, in the case's order: ``response_schema`` → ``schema_mismatch``; one that needs
   a JSON body on a body that is not JSON → ``invalid_json``; any other → ``assertion_failed``.

Intermediate steps have no assertions: 401/403 there is ``auth_failed``, any other status >= 400 ``http_error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.adapters.scrub import MIN_VALUE_CHARS, key_set, normalize_key
from qlab.contracts.results import AssertionResult
from qlab.execute import assertions
from qlab.execute.assertions import ResponseView
from qlab.project.model import Assertion

AUTH_STATUSES = frozenset({401, 403})
EXCERPT_CHARS = 2000


def status_reason(status: int, case_assertions: Sequence[Assertion], *, final: bool) -> str | None:
    """``auth_failed`` / ``http_error`` for a status the case does not expect, else None."""
    if status < 400:
        return None
    if final:
        for item in case_assertions:
            if (
                item.type == "http_status"
                and not assertions.HttpStatus().problems(item.args)
                and assertions.status_accepted(item.args, status)
            ):
                return None
    return "auth_failed" if status in AUTH_STATUSES else "http_error"


def assertion_reason(
    case_assertions: Sequence[Assertion], results: Sequence[AssertionResult], view: ResponseView
) -> tuple[str, str] | None:
    """(reason, message) of the first failed assertion, or None when all passed."""
    for item, result in zip(case_assertions, results, strict=False):
        if result.passed:
            continue
        if item.type == "response_schema" and view.json_error is None:
            return "schema_mismatch", result.message
        kind = assertions.find(item.type)
        if kind is not None and kind.needs_json and view.json_error is not None:
            return "invalid_json", result.message
        return "assertion_failed", result.message
    return None


def sensitive_values(document: Any, fields: Sequence[str]) -> set[str]:
    """Every scalar value found under a key named in ``fields``, anywhere in ``document``, as text (a number
    too), to scrub by value. Keys match as the scrubber's key rule does: case, ``-`` and ``_`` ignored (``userId``
    = ``user_id``). A value shorter than MIN_VALUE_CHARS is left out: by value it would match inside other words
    and numbers (``userId: 1`` would take the ``1`` of ``/posts/1``); under its key it is replaced anyway."""
    wanted = key_set(tuple(fields))
    found: set[str] = set()
    if not wanted:
        return found
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if (
                    isinstance(key, str)
                    and normalize_key(key) in wanted
                    and isinstance(value, (str, int, float))
                    and not isinstance(value, bool)
                ):
                    whole = isinstance(value, float) and value.is_integer()
                    text = str(int(value)) if whole else str(value)
                    if len(text) >= MIN_VALUE_CHARS:
                        found.add(text)
                elif isinstance(value, (Mapping, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (Mapping, list)))
    return found


def excerpt(view: ResponseView) -> str:
    """The body as text for a failed case (scrubbed and truncated later by the scrubber)."""
    if view.json_error is None:
        return json.dumps(view.json(), ensure_ascii=False, sort_keys=False)
    return view.text


def compact(value: Any, *, limit: int = EXCERPT_CHARS) -> Any:
    """A value small enough for a result: a large list or dict becomes truncated JSON text."""
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > limit:
            return f"{text[:limit]}…[truncated {len(text) - limit} of {len(text)} chars]"
    return value

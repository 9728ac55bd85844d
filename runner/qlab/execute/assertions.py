"""The assertion registry: one Protocol, one literal dict, and the types plugin packages add.

An assertion type checks one typed assertion of a case (``{"type": "http_status", "in": [200]}``) against what
the stage observed and returns an ``AssertionResult``. On failure its message gives the expected value, the
actual value and the JSONPath (where there is one), e.g.
``json_path_equals $.data.tier: expected 'plus', actual 'basic'``.

The execute types here check a ``ResponseView``. Each type's ``schema`` (its arguments) is its branch of the
case schema, generated from ``ASSERTIONS`` into the shipped schemas and docs/cases.md; plugin packages add
types through the ``qlab.assertions`` entry point group (``qlab.contracts.extensions``, docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from qlab.contracts import extensions
from qlab.contracts.errors import InputError
from qlab.contracts.results import AssertionResult

# The execute types and what they see live in qlab.execute; they are re-exported here, the registry's home.
from qlab.execute.checks import (
    BodyContains,
    HeaderEquals,
    HeaderPresent,
    HttpStatus,
    JsonPathCount,
    JsonPathEquals,
    JsonPathExists,
    JsonPathMatches,
    LatencyBelow,
    ResponseSchema,
    check_status,
    status_accepted,
    status_range,
)
from qlab.execute.response import InvalidJSON, ResponseView
from qlab.project.model import Assertion

__all__ = [
    "ASSERTIONS",
    "AssertionType",
    "BodyContains",
    "HeaderEquals",
    "HeaderPresent",
    "HttpStatus",
    "InvalidJSON",
    "JsonPathCount",
    "JsonPathEquals",
    "JsonPathExists",
    "JsonPathMatches",
    "LatencyBelow",
    "ResponseSchema",
    "ResponseView",
    "check_status",
    "evaluate",
    "find",
    "get",
    "names",
    "status_accepted",
    "status_range",
]


class AssertionType(Protocol):
    """One kind of assertion.

    - ``name``: the ``type`` value cases use; the registry key.
    - ``stage``: the stage whose observations it checks (``execute`` here).
    - ``needs_json``: True when it reads the parsed body (a non-JSON body then fails it as ``invalid_json``).
    - ``schema``: its arguments as a JSON Schema object: ``description`` (one line, lower case), ``properties``
      and ``required`` (``type`` is added), and any other keyword of an object schema (a ``oneOf``).
    - ``problems(args)``: what is wrong with a case's arguments (empty when fine), for load-time errors.
    - ``check(args, response)``: the verdict. May raise InvalidJSON; ``evaluate`` turns that into a failure.
    """

    name: str
    stage: str
    needs_json: bool

    @property
    def schema(self) -> Mapping[str, Any]: ...

    def problems(self, args: Mapping[str, Any]) -> list[str]: ...

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult: ...


ASSERTIONS: dict[str, AssertionType] = {
    "http_status": HttpStatus(),
    "json_path_exists": JsonPathExists(),
    "json_path_equals": JsonPathEquals(),
    "json_path_matches": JsonPathMatches(),
    "json_path_count": JsonPathCount(),
    "response_schema": ResponseSchema(),
    "header_present": HeaderPresent(),
    "header_equals": HeaderEquals(),
    "latency_ms_below": LatencyBelow(),
    "body_contains": BodyContains(),
}


@cache
def _types() -> dict[str, AssertionType]:
    """The built-in types and those of the installed plugin packages (``qlab.contracts.extensions``)."""
    return {**ASSERTIONS, **{kind.name: kind for kind in extensions.plugin_assertions(ASSERTIONS)}}


def get(name: str) -> AssertionType:
    """The type registered as ``name``, or InputError with a suggestion."""
    kind = _types().get(name)
    if kind is None:
        from qlab.adapters.fuzzy import did_you_mean  # rapidfuzz only on this error path

        raise InputError(f"unknown assertion type {name!r}.{did_you_mean(name, _types())}")
    return kind


def find(name: str) -> AssertionType | None:
    """The type registered as ``name``, or None."""
    return _types().get(name)


def names(stage: str | None = None) -> tuple[str, ...]:
    """Registered type names (of one stage when given), sorted."""
    return tuple(sorted(n for n, k in _types().items() if stage is None or k.stage == stage))


def evaluate(assertion: Assertion, response: ResponseView) -> AssertionResult:
    """Run one assertion; a non-JSON body, a bad JSONPath or bad arguments become a failed result, never an
    exception."""
    try:
        kind = get(assertion.type)
        problems = kind.problems(assertion.args)
        if problems:
            return AssertionResult(
                assertion.type, False, f"{assertion.type}: invalid arguments: {'; '.join(problems)}"
            )
        return kind.check(assertion.args, response)
    except InvalidJSON as exc:
        path = assertion.args.get("path")
        where = f" {path}" if isinstance(path, str) else ""
        return AssertionResult(
            assertion.type,
            False,
            f"{assertion.type}{where}: expected a JSON body, actual: {exc}",
            "JSON body",
            None,
            path if isinstance(path, str) else None,
        )
    except (InputError, ValueError, TypeError) as exc:
        return AssertionResult(assertion.type, False, f"{assertion.type}: {exc}")

"""The execute assertion types (registered in ``qlab.execute.assertions``). Each failure message gives the expected
value, the actual value and the JSONPath where there is one; the table of arguments is in ``qlab.execute.assertions``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from qlab.adapters import jsonpath
from qlab.collection.model import is_json_media
from qlab.contracts.results import AssertionResult
from qlab.execute.response import ResponseView
from qlab.execute.schema_check import (
    media_matches,
    media_type,
    response_media_for,
    response_schema_for,
    validate,
)


def _need(args: Mapping[str, Any], *keys: str) -> list[str]:
    return [f"missing {k!r}" for k in keys if k not in args]


def _fail(kind: str, what: str, expected: Any, actual: Any, path: str | None = None) -> AssertionResult:
    where = f" {path}" if path else ""
    return AssertionResult(
        kind, False, f"{kind}{where}: expected {what}{expected!r}, actual {actual!r}", expected, actual, path
    )


def _ok(kind: str, expected: Any = None, actual: Any = None, path: str | None = None) -> AssertionResult:
    return AssertionResult(kind, True, "", expected, actual, path)


# pieces of the argument schemas (each type's ``schema`` is its branch of the case schema, less ``type``)
_PATH = {
    "type": "string",
    "minLength": 1,
    "pattern": "^\\$",
    "description": "A JSONPath into the response body.",
    "examples": ["$.data[0].id"],
}
_STATUS = {"type": "integer", "minimum": 100, "maximum": 599}
_HEADER = {"type": "string", "description": "Header name.", "minLength": 1}


class HttpStatus:
    name, stage, needs_json = "http_status", "execute", False
    schema = {
        "description": "the response status, as one of a list (in), a range (range) or one value (equals).",
        "properties": {
            "in": {
                "type": "array",
                "minItems": 1,
                "description": "Accepted statuses.",
                "items": {**_STATUS, "description": "An HTTP status."},
            },
            "range": {
                "type": ["string", "array"],
                "description": 'Accepted range: "2xx" or [low, high].',
                "pattern": "^[1-5]xx$",
                "examples": ["2xx"],
                "minItems": 2,
                "maxItems": 2,
                "items": {**_STATUS, "description": "A bound (inclusive)."},
            },
            "equals": {**_STATUS, "description": "The one accepted status."},
        },
        "oneOf": [{"required": ["in"]}, {"required": ["range"]}, {"required": ["equals"]}],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        if not any(k in args for k in ("in", "range", "equals")):
            return ["needs one of 'in', 'range' or 'equals'"]
        if "range" in args and status_range(args["range"]) is None:
            return [f"range {args['range']!r} is neither 'Nxx' nor [low, high]"]
        return []

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        return check_status(args, response.status)


def status_range(spec: Any) -> tuple[int, int] | None:
    """``"2xx"`` → (200, 299); ``[200, 204]`` → (200, 204); anything else → None."""
    if isinstance(spec, str) and re.fullmatch(r"[1-5][xX]{2}", spec):
        low = int(spec[0]) * 100
        return low, low + 99
    if isinstance(spec, (list, tuple)) and len(spec) == 2 and all(isinstance(v, int) for v in spec):
        return int(spec[0]), int(spec[1])
    return None


def status_accepted(args: Mapping[str, Any], status: int) -> bool:
    """True when an http_status assertion with ``args`` accepts ``status``."""
    return check_status(args, status).passed


def check_status(args: Mapping[str, Any], status: int) -> AssertionResult:
    kind = "http_status"
    if "in" in args:
        allowed = [int(v) for v in args["in"]]
        return _ok(kind, allowed, status) if status in allowed else _fail(kind, "status in ", allowed, status)
    if "range" in args:
        bounds = status_range(args["range"])
        if bounds is not None and bounds[0] <= status <= bounds[1]:
            return _ok(kind, args["range"], status)
        return _fail(kind, "status in range ", args["range"], status)
    expected = int(args["equals"])
    return _ok(kind, expected, status) if status == expected else _fail(kind, "status ", expected, status)


class JsonPathExists:
    name, stage, needs_json = "json_path_exists", "execute", True
    schema = {
        "description": "the JSONPath selects at least one value.",
        "properties": {"path": _PATH},
        "required": ["path"],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "path") or _path_problems(args["path"])

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        path = str(args["path"])
        if jsonpath.exists(path, response.json()):
            return _ok(self.name, path=path)
        return AssertionResult(
            self.name,
            False,
            f"{self.name} {path}: expected a value, actual: nothing matched",
            "a value",
            None,
            path,
        )


class JsonPathEquals:
    name, stage, needs_json = "json_path_equals", "execute", True
    schema = {
        "description": "the value the JSONPath selects equals this one (write equals, or value).",
        "properties": {
            "path": _PATH,
            "equals": {"description": "The expected value."},
            "value": {"description": "The expected value (a synonym of equals)."},
        },
        "required": ["path"],
        "oneOf": [{"required": ["equals"]}, {"required": ["value"]}],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "path", "equals") or _path_problems(args["path"])

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        path, expected = str(args["path"]), args["equals"]
        values = jsonpath.find(path, response.json())
        actual = values[0] if len(values) == 1 else values or None
        if values and actual == expected:
            return _ok(self.name, expected, actual, path)
        return _fail(self.name, "", expected, actual, path)


class JsonPathMatches:
    name, stage, needs_json = "json_path_matches", "execute", True
    schema = {
        "description": "every value the JSONPath selects matches a regular expression (write regex, or pattern).",
        "properties": {
            "path": _PATH,
            "regex": {"type": "string", "description": "A Python regular expression (re.search)."},
            "pattern": {"type": "string", "description": "A Python regular expression (a synonym of regex)."},
        },
        "required": ["path"],
        "oneOf": [{"required": ["regex"]}, {"required": ["pattern"]}],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        found = _need(args, "path", "regex") or _path_problems(args["path"])
        if not found:
            try:
                re.compile(str(args["regex"]))
            except re.error as exc:
                found.append(f"regex {args['regex']!r} is invalid: {exc}")
        return found

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        path, pattern = str(args["path"]), str(args["regex"])
        values = jsonpath.find(path, response.json())
        wrong = [v for v in values if not isinstance(v, str) or re.search(pattern, v) is None]
        if values and not wrong:
            return _ok(self.name, pattern, values[0] if len(values) == 1 else values, path)
        actual = wrong[0] if wrong else None
        return _fail(self.name, "a match of ", pattern, actual, path)


class JsonPathCount:
    """Counts the values ``path`` selects; a path that selects exactly one list (``$.data``) counts its items."""

    name, stage, needs_json = "json_path_count", "execute", True
    schema = {
        "description": "how many values the JSONPath selects (the items, when it selects one list).",
        "properties": {
            "path": _PATH,
            "equals": {"type": "integer", "minimum": 0, "description": "Exact count."},
            "min": {"type": "integer", "minimum": 0, "description": "Smallest count accepted."},
            "max": {"type": "integer", "minimum": 0, "description": "Largest count accepted."},
        },
        "required": ["path"],
        "anyOf": [{"required": ["equals"]}, {"required": ["min"]}, {"required": ["max"]}],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        found = _need(args, "path") or _path_problems(args["path"])
        if not any(k in args for k in ("equals", "min", "max")):
            found.append("needs one of 'equals', 'min' or 'max'")
        return found

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        path = str(args["path"])
        values = jsonpath.find(path, response.json())
        count = len(values[0]) if len(values) == 1 and isinstance(values[0], list) else len(values)
        bounds = {k: int(args[k]) for k in ("equals", "min", "max") if k in args}
        ok = (
            ("equals" not in bounds or count == bounds["equals"])
            and ("min" not in bounds or count >= bounds["min"])
            and ("max" not in bounds or count <= bounds["max"])
        )
        if ok:
            return _ok(self.name, bounds, count, path)
        what = ", ".join(f"{k} {v}" for k, v in bounds.items())
        return AssertionResult(
            self.name,
            False,
            f"{self.name} {path}: expected count {what}, actual {count}",
            bounds,
            count,
            path,
        )


NO_BODY = frozenset({204, 205, 304})  # statuses whose responses carry no body (RFC 9110)


class ResponseSchema:
    """The body against the response the spec documents for the status, as its content type says: a JSON body
    is validated against the schema; an empty body passes where none is documented (a 204); a non-JSON body
    (XML, text) passes when its media type is one the spec documents for the status (JSON Schema describes
    JSON only), and fails when it is not."""

    name, stage, needs_json = "response_schema", "execute", True
    schema = {
        "description": "the body matches the tool's documented response schema.",
        "properties": {
            "status": {
                **_STATUS,
                "description": "Check against this status' schema instead of the actual status'.",
            }
        },
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return []

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        status = int(args.get("status", response.status))
        tool_id = response.tool.id if response.tool else "?"
        schema = response_schema_for(response.tool, status) if response.tool else None
        documented = response_media_for(response.tool, status) if response.tool else None
        media = media_type(response.headers.get("Content-Type", ""))
        if schema is not None and not response.body and (status in NO_BODY or documented == ()):
            return _ok(self.name, f"no body for {tool_id} {status}", "no body", "$")
        if schema is not None and documented and media and not is_json_media(media):
            if any(media_matches(media, d) for d in documented):
                return _ok(self.name, f"{media} for {tool_id} {status} (not JSON: its schema is not checked)",
                           media, "$")  # fmt: skip
            return _fail(self.name, f"a documented content type for {tool_id} {status}: ", list(documented),
                         media, "$")  # fmt: skip
        if schema is None:
            return AssertionResult(
                self.name,
                False,
                f"{self.name}: expected a response schema for status {status} in tool "
                f"{tool_id}, actual: none documented",
                f"schema of {status}",
                None,
                "$",
            )
        issues = validate(response.json(), schema)
        if not issues:
            return _ok(self.name, f"schema of {tool_id} {status}", "valid", "$")
        first = issues[0]
        more = f" (+{len(issues) - 1} more)" if len(issues) > 1 else ""
        return AssertionResult(
            self.name,
            False,
            f"{self.name} {first.path}: expected the {tool_id} {status} "
            f"schema, actual: {first.message}{more}",
            f"schema of {tool_id} {status}",
            [i.render() for i in issues[:10]],
            first.path,
        )


class HeaderPresent:
    name, stage, needs_json = "header_present", "execute", False
    schema = {
        "description": "the response has this header.",
        "properties": {"name": _HEADER},
        "required": ["name"],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "name")

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        header = str(args["name"])
        if header in response.headers:
            return _ok(self.name, header, header)
        return _fail(self.name, "header ", header, sorted(response.headers.keys()))


class HeaderEquals:
    name, stage, needs_json = "header_equals", "execute", False
    schema = {
        "description": "the header has this value (write equals, or value).",
        "properties": {
            "name": _HEADER,
            "equals": {"type": "string", "description": "The expected value."},
            "value": {"type": "string", "description": "The expected value (a synonym of equals)."},
        },
        "required": ["name"],
        "oneOf": [{"required": ["equals"]}, {"required": ["value"]}],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "name", "equals")

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        header, expected = str(args["name"]), str(args["equals"])
        actual = response.headers.get(header)
        if actual == expected:
            return _ok(self.name, expected, actual)
        return _fail(self.name, f"{header}: ", expected, actual)


class LatencyBelow:
    name, stage, needs_json = "latency_ms_below", "execute", False
    schema = {
        "description": "the request took less than ms milliseconds.",
        "properties": {
            "ms": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 3600000,
                "description": "The limit, in milliseconds.",
            }
        },
        "required": ["ms"],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "ms")

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        limit, actual = float(args["ms"]), round(response.latency_ms, 3)
        return (
            _ok(self.name, limit, actual)
            if actual < limit
            else _fail(self.name, "latency below ", limit, actual)
        )


class BodyContains:
    name, stage, needs_json = "body_contains", "execute", False
    schema = {
        "description": "the raw body contains this text.",
        "properties": {"text": {"type": "string", "description": "The text.", "minLength": 1}},
        "required": ["text"],
    }

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        return _need(args, "text")

    def check(self, args: Mapping[str, Any], response: ResponseView) -> AssertionResult:
        needle = str(args["text"])
        if needle in response.text:
            return _ok(self.name, needle)
        return _fail(self.name, "body containing ", needle, f"{len(response.body)} bytes without it")


def _path_problems(path: Any) -> list[str]:
    return [] if isinstance(path, str) and jsonpath.is_valid(path) else [f"invalid JSONPath {path!r}"]

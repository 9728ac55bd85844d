"""Plan step + Tool + Environment → an HTTP request.

Arguments are placed by the tool's parameters: ``path`` into the path template, ``query`` into the query string
(lists repeat the key), ``header`` into headers, ``cookie`` into one ``Cookie`` header, and ``body`` parameters
into a JSON, form or multipart body per the tool's ``request_content_type``. The base URL comes from the
environment, so the same plan runs against dev or staging.

Values can come from earlier steps: a step's ``bindings`` (``{"memberNo": {"step": 0, "path": "$.data[0].memberNo"}}``)
read an earlier response with a JSONPath (compiled once, in ``qlab.adapters.jsonpath``), and ``${captures.name}`` in an
argument (of a later step or a cleanup step) is replaced by a value the case captured. A whole-string reference
keeps the captured value's type; an embedded one is rendered as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from qlab.adapters import jsonpath
from qlab.collection.model import Tool
from qlab.contracts.errors import InputError
from qlab.engine.types import PlanStep

BodyKind = Literal["none", "json", "form", "multipart", "text"]
_CAPTURE = re.compile(r"\$\{captures\.([A-Za-z0-9_.\-]+)\}")
_PLACEHOLDER = re.compile(r"\{([^{}/]+)\}")
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")  # needs no percent-encoding in a path segment
_BODYLESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS", "TRACE"})


class RequestError(Exception):
    """A step cannot become a request: a required parameter has no value, a binding or capture is unresolved,
    or the tool is not an HTTP operation. The case fails as ``http_error`` with this message."""


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A request ready to send. ``url`` is absolute and has no query string; ``path`` is the rendered path."""

    method: str
    url: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    body_kind: BodyKind = "none"
    body: Any = None
    tool_id: str | None = None
    ignored: tuple[str, ...] = ()  # arguments the tool has no parameter for
    idempotent: bool | None = None  # the tool's own say (MCP idempotentHint, ...); None: judge by the method

    def httpx_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``Client.build_request``."""
        kwargs: dict[str, Any] = {}
        if self.params:
            kwargs["params"] = list(self.params)
        if self.headers:
            kwargs["headers"] = dict(self.headers)
        if self.body_kind == "json":
            kwargs["json"] = self.body
        elif self.body_kind == "form":
            kwargs["data"] = self.body
        elif self.body_kind == "multipart":
            kwargs["files"] = {k: (None, v) for k, v in self.body.items()}
        elif self.body_kind == "text":
            kwargs["content"] = self.body
        return kwargs


def segment(value: Any) -> str:
    """A value as one percent-encoded path segment."""
    text = render(value)
    return text if _UNRESERVED.fullmatch(text) else quote(text, safe="")


def render(value: Any) -> str:
    """A parameter value as text: booleans as ``true``/``false``, objects as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def substitute(value: Any, captures: Mapping[str, Any]) -> Any:
    """``value`` with every ``${captures.name}`` replaced (recursively in dicts and lists)."""
    if isinstance(value, str):
        if "${" not in value:
            return value
        whole = _CAPTURE.fullmatch(value)
        if whole:
            return _captured(whole.group(1), captures)
        return _CAPTURE.sub(lambda m: render(_captured(m.group(1), captures)), value)
    if isinstance(value, Mapping):
        return {k: substitute(v, captures) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [substitute(v, captures) for v in value]
    return value


def _captured(name: str, captures: Mapping[str, Any]) -> Any:
    if name not in captures:
        known = ", ".join(sorted(captures)) or "none yet"
        raise RequestError(f"${{captures.{name}}} has no value (captured so far: {known})")
    return captures[name]


def resolve_arguments(
    step: PlanStep, *, outputs: Sequence[Any], captures: Mapping[str, Any]
) -> dict[str, Any]:
    """The step's literal arguments (captures substituted) plus its bindings read from earlier responses.

    ``outputs[i]`` is the parsed JSON body of step ``i`` (None when it was not JSON).
    """
    arguments = {name: substitute(value, captures) for name, value in step.arguments.items()}
    for name, binding in step.bindings.items():
        index = binding.get("step")
        path = str(binding.get("path", "$"))
        if not isinstance(index, int) or not 0 <= index < len(outputs):
            raise RequestError(f"binding {name}: step {index!r} has not run before step {len(outputs)}")
        try:
            values = jsonpath.find(path, outputs[index])
        except InputError as exc:
            raise RequestError(f"binding {name}: {exc}") from None
        if not values:
            raise RequestError(f"binding {name}: {path} matched nothing in the response of step {index}")
        arguments[name] = values[0]
    return arguments


def join_url(base_url: str, path: str) -> str:
    """``http://h:1/api`` + ``/members`` → ``http://h:1/api/members`` (the base path is kept)."""
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def build_request(
    tool: Tool, arguments: Mapping[str, Any], *, base_url: str, headers: Mapping[str, str] | None = None
) -> PreparedRequest:
    """The request that calls ``tool`` with ``arguments``; ``headers`` are the environment's static headers."""
    if not tool.method or tool.path is None:
        raise RequestError(
            f"tool {tool.id} is a {tool.kind} tool, not an HTTP operation: the execute stage sends HTTP only"
        )
    method, required_body = _shape(tool)
    out_headers: dict[str, str] = dict(headers or {})
    path_values: dict[str, str] = {}
    params: list[tuple[str, str]] = []
    cookies: list[str] = []
    body: dict[str, Any] = {}
    used: set[str] = set()
    for param in tool.parameters:
        if param.name not in arguments:
            if param.required and param.location != "body":
                raise RequestError(
                    f"tool {tool.id} needs {param.location} parameter {param.name!r}; the plan gives no value"
                )
            continue
        value = arguments[param.name]
        used.add(param.name)
        if param.location == "path":
            path_values[param.name] = segment(value)
        elif param.location == "query":
            items = value if isinstance(value, (list, tuple)) else [value]
            params.extend((param.name, render(v)) for v in items if v is not None)
        elif param.location == "header":
            out_headers[param.name] = render(value)
        elif param.location == "cookie":
            cookies.append(f"{param.name}={render(value)}")
        else:  # body / argument
            body[param.name] = value
    if cookies:
        out_headers["Cookie"] = "; ".join(cookies)
    path = (
        tool.path
        if "{" not in tool.path
        else _fill_path(tool.path, path_values, arguments, used, owner=f"tool {tool.id}")
    )
    kind: BodyKind = "none"
    payload: Any = None
    if body or tool.request_body is not None:
        kind, payload = _body(tool, body, arguments, used)
    missing = [name for name in required_body if name not in body]
    if missing and "body" not in used:
        raise RequestError(
            f"tool {tool.id} needs body field(s) {', '.join(missing)}; the plan gives no value"
        )
    ignored = () if len(used) == len(arguments) else tuple(sorted(set(arguments) - used))
    return PreparedRequest(
        method,
        join_url(base_url, path),
        path,
        tuple(params),
        out_headers,
        kind,
        payload,
        tool.id,
        ignored,
        tool.idempotent,
    )


def _shape(tool: Tool) -> tuple[str, tuple[str, ...]]:
    """(upper-case method, required body fields) of a tool."""
    required = tuple(p.name for p in tool.parameters if p.location == "body" and p.required)
    return (tool.method or "").upper(), required


def raw_request(
    method: str,
    path: str,
    arguments: Mapping[str, Any],
    *,
    base_url: str,
    headers: Mapping[str, str] | None = None,
) -> PreparedRequest:
    """A request without a tool (a raw cleanup step): ``{name}`` in ``path`` is filled from ``arguments``; the
    rest goes to the query string (GET, DELETE, ...) or a JSON body (POST, PUT, PATCH)."""
    method = method.upper()
    used: set[str] = set()
    values = {k: segment(v) for k, v in arguments.items()}
    rendered = _fill_path(path, values, arguments, used, owner=f"{method} {path}")
    rest = {k: v for k, v in arguments.items() if k not in used}
    if method in _BODYLESS or not rest:
        params = tuple((k, render(v)) for k, v in rest.items())
        return PreparedRequest(method, join_url(base_url, rendered), rendered, params, dict(headers or {}))
    return PreparedRequest(
        method, join_url(base_url, rendered), rendered, (), dict(headers or {}), "json", rest
    )


def _fill_path(
    template: str, values: Mapping[str, str], arguments: Mapping[str, Any], used: set[str], *, owner: str
) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            used.add(name)
            return values[name]
        if name in arguments:
            used.add(name)
            return segment(arguments[name])
        raise RequestError(f"{owner}: path parameter {name!r} has no value")

    return _PLACEHOLDER.sub(fill, template)


def _body(
    tool: Tool, body: dict[str, Any], arguments: Mapping[str, Any], used: set[str]
) -> tuple[BodyKind, Any]:
    content_type = (tool.request_content_type or "application/json").split(";")[0].strip().lower()
    if not body and tool.request_body is not None and "body" in arguments:
        used.add("body")  # a non-object body (array, text) is given whole as the "body" argument
        whole = arguments["body"]
        if content_type.startswith("text/"):
            return "text", render(whole)
        return ("json", whole) if _is_json(content_type) else ("form", whole)
    if not body:
        return "none", None
    if content_type == "application/x-www-form-urlencoded":
        return "form", {k: render(v) for k, v in body.items()}
    if content_type == "multipart/form-data":
        return "multipart", {k: render(v) for k, v in body.items()}
    return "json", body


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")

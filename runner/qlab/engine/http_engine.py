"""The ``http`` engine: a team's own search / selector / planner service, called over HTTP.

This adapter runs the search, select and plan stages against a team's real engine. The wire contract is
``schemas/engine-request.schema.json`` and ``engine-response.schema.json``:

- ``POST <url>/search`` ``{"query", "k"}`` → ``{"rows": [...], "query_terms"}``;
- ``POST <url>/select`` ``{"query", "rows", "query_terms", "entities", "llm_target"}`` → a selection
  (``selected_target``, ``overrode_llm``, ``reason_codes``, ``ambiguous``, ``candidates``…);
- ``POST <url>/plan`` ``{"query", "target", "entities"}`` → a plan (``plan_id``, ``status``, ``steps``…).

``engine.headers`` maps a header name to the environment variable holding its value; values are read once and
never logged. A transport failure, an HTTP error status, a reply that is not JSON or that breaks the contract
raises ``InputError`` naming the endpoint and the JSON path; the stages record it as ``engine_error``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from qlab.adapters import http, strictjson
from qlab.contracts.errors import DependencyError, InputError
from qlab.engine import wire
from qlab.engine.types import Plan, SearchResult, Selection
from qlab.project.model import EngineConfig

T = TypeVar("T")


class HttpEngine:
    """Talks to ``config.url``. ``transport`` lets tests inject ``httpx.MockTransport``."""

    name = "http"

    def __init__(
        self,
        config: EngineConfig,
        *,
        environ: Mapping[str, str] | None = None,
        transport: http.BaseTransport | None = None,
    ) -> None:
        if not config.url:
            raise InputError("engine.url: an http engine needs the base URL of the service (engine.url)")
        self.url = config.url.rstrip("/")
        env = os.environ if environ is None else environ
        headers = {}
        for header, variable in config.headers.items():
            value = env.get(variable)
            if value is None:
                raise InputError(
                    f"engine.headers.{header}: the environment variable {variable} is not set; export it before the run"
                )
            headers[header] = value
        self.http = http.make_client(timeout=config.timeout_sec, headers=headers, transport=transport)
        self.max_bytes = config.limits.reply_bytes

    def _post(self, endpoint: str, body: Mapping[str, Any], parse: Callable[..., T]) -> T:
        url = f"{self.url}/{endpoint}"
        try:
            response, reply = http.call(self.http, "POST", url, json=dict(body), max_bytes=self.max_bytes)
        except http.BodyTooLarge as exc:
            raise InputError(f"engine {url} reply: {exc} (limits.reply_mib)") from None
        except (
            http.HTTPError
        ) as exc:  # no answer at all: the service is down, not wrong (exit 2, not a block)
            raise DependencyError(
                f"engine {url}: {type(exc).__name__}: {exc}", reason="engine_unreachable"
            ) from None
        text = reply[:200].decode("utf-8", "replace")
        if response.status_code >= 400:
            raise InputError(f"engine {url} answered {response.status_code}: {text}")
        try:
            data = strictjson.json_of(reply)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"engine {url} reply: $: not JSON ({exc}; {text[:80]!r})") from None
        return parse(data, where=f"engine {url} reply")

    def search(self, query: str, *, k: int) -> SearchResult:
        return self._post("search", {"query": query, "k": k}, wire.search_from_dict)

    def select(
        self,
        query: str,
        result: SearchResult,
        *,
        entities: Mapping[str, Any],
        llm_target: str | None,
    ) -> Selection:
        body = {
            **wire.search_to_dict(result),
            "query": query,
            "entities": dict(entities),
            "llm_target": llm_target,
        }
        return self._post("select", body, wire.selection_from_dict)

    def plan(self, query: str, target: str, *, entities: Mapping[str, Any]) -> Plan:
        body = {"query": query, "target": target, "entities": dict(entities)}
        return self._post("plan", body, wire.plan_from_dict)

    def close(self) -> None:
        self.http.close()

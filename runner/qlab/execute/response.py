"""What an execute assertion sees: the final response of a case's plan, its body parsed once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qlab.adapters import strictjson
from qlab.collection.model import Tool

_UNSET: Any = object()


class InvalidJSON(Exception):
    """The body is not JSON but an assertion needs it (the case fails as ``invalid_json``)."""


@dataclass(slots=True)
class ResponseView:
    """What an execute assertion sees: the final response of the case's plan."""

    status: int
    headers: Mapping[str, str]  # case-insensitive lookups (httpx.Headers)
    body: bytes = b""
    latency_ms: float = 0.0
    tool: Tool | None = None
    _json: Any = field(default=_UNSET, repr=False)
    _json_error: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def json_error(self) -> str | None:
        """Why the body is not JSON, or None when it is."""
        try:
            self.json()
        except InvalidJSON as exc:
            return str(exc)
        return None

    def json(self) -> Any:
        """The parsed body, parsed once; raises InvalidJSON."""
        if self._json is _UNSET and self._json_error is None:
            try:
                self._json = strictjson.json_of(self.body)
            except (ValueError, UnicodeDecodeError) as exc:
                self._json_error = (
                    f"body is not valid JSON ({exc})" if self.body else "body is empty, not JSON"
                )
            except RecursionError:  # the C decoder recurses: a body nested deeper than the interpreter allows
                self._json_error = "body is nested too deeply to parse as JSON"
        if self._json_error is not None:
            raise InvalidJSON(self._json_error)
        return self._json

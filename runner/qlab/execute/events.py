"""Runner events: what the execute stage did for a case, in order, each with a UTC timestamp (ISO, ms).

Kinds: ``request_sent`` (with the ``host`` it went to: every redirect hop has its own), ``response_received``,
``redirect``, ``retry``, ``assertion``, ``cleanup``. Details are non-secret by construction (method, host,
path without query, status, sizes, reason codes; never header values or bodies) and the whole list is scrubbed
again before it reaches a result.
"""

from __future__ import annotations

import time
from typing import Any, Literal

EventKind = Literal["request_sent", "response_received", "redirect", "retry", "assertion", "cleanup"]
EVENT_KINDS: tuple[EventKind, ...] = (
    "request_sent",
    "response_received",
    "redirect",
    "retry",
    "assertion",
    "cleanup",
)


_second: list[Any] = [-1, ""]  # the last whole second formatted, shared: formatting is the costly part


def now_iso() -> str:
    """The current UTC time as ``2024-05-01T12:00:00.123Z``."""
    now = time.time()
    whole = int(now)
    cached = _second
    if cached[0] != whole:
        cached[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        cached[0] = whole
    return f"{cached[1]}.{int((now - whole) * 1000):03d}Z"


class EventLog:
    """An append-only list of events for one case. Not shared between threads."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, kind: EventKind, **details: Any) -> None:
        event: dict[str, Any] = {"event": kind, "at": now_iso()}
        event.update(details)
        self.events.append(event)

    def of(self, kind: EventKind) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]

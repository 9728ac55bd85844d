"""Mutation safety (execute safety), decided before any request of a case is sent.

A call is read-only when its method is GET, HEAD, OPTIONS or TRACE *and* its tool's mutation class is
``read_only``. A case with any other call — a plan step or a cleanup step — runs only when all hold, checked in
this order, the first miss being the case's failure:

1. the case says ``mutation_safety: allow_mutation``           else ``mutation_not_allowed``
2. the target host is in the environment's ``allowed_hosts``    else ``host_not_allowed``
   (no ``allowed_hosts``, or an empty list, allows no host: fail closed, never "any host")
3. the case has cleanup steps and assertions                   else ``cleanup_missing``

A refused case sends nothing: no plan step, no cleanup, no token request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from qlab.collection.model import MutationClass
from qlab.project.model import Case, host_allowed

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A request a case will make, as far as safety cares: ``label`` names it in messages."""

    label: str
    method: str | None
    mutation: MutationClass = MutationClass.READ_ONLY

    @property
    def read_only(self) -> bool:
        return reads(self.method, self.mutation)


def reads(method: str | None, mutation: MutationClass) -> bool:
    """True for a read-only call: a GET/HEAD/OPTIONS/TRACE (or no method: MCP, Python) of a read_only tool."""
    if mutation is not MutationClass.READ_ONLY:
        return False
    return method is None or method.upper() in READ_METHODS


@dataclass(frozen=True, slots=True)
class SafetyVerdict:
    allowed: bool
    read_only: bool  # no call of the case mutates
    reason: str | None = None  # mutation_not_allowed | host_not_allowed | cleanup_missing
    message: str = ""
    mutating: tuple[str, ...] = ()  # labels of the mutating calls

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"read_only": self.read_only, "allowed": self.allowed}
        if self.mutating:
            out["mutating_calls"] = list(self.mutating)
        if self.reason:
            out["reason"] = self.reason
        return out


READ_ONLY = SafetyVerdict(True, True)


def check(
    case: Case, calls: Sequence[PlannedCall], *, base_url: str, allowed_hosts: Iterable[str]
) -> SafetyVerdict:
    """The verdict for ``case`` whose requests are ``calls`` against ``base_url``."""
    mutating = tuple(c.label for c in calls if not c.read_only)
    if not mutating:
        return SafetyVerdict(True, True)
    what = ", ".join(mutating)
    if case.mutation_safety != "allow_mutation":
        return SafetyVerdict(
            False,
            False,
            "mutation_not_allowed",
            f"{what} would mutate, and the case does not say mutation_safety: allow_mutation",
            mutating,
        )
    hosts = tuple(allowed_hosts)
    if not host_allowed(base_url, hosts):
        parts = urlsplit(base_url)
        host = parts.netloc.rpartition("@")[2] or "(no host)"  # never the userinfo: it may hold a password
        listed = ", ".join(hosts) or "none"
        return SafetyVerdict(
            False,
            False,
            "host_not_allowed",
            f"{what} would mutate {host}, which is not in allowed_hosts ({listed})",
            mutating,
        )
    if not case.cleanup or not case.assertions:
        missing = " and ".join(
            n for n, have in (("cleanup steps", case.cleanup), ("assertions", case.assertions)) if not have
        )
        return SafetyVerdict(
            False, False, "cleanup_missing", f"{what} would mutate, and the case has no {missing}", mutating
        )
    return SafetyVerdict(True, False, mutating=mutating)

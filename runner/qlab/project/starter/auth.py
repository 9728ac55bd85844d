"""An auth profile per security scheme of the spec, each reading a named environment variable (never a value).

Scheme → profile kind, variables (``PREFIX`` = the project; the suffixes are ``_BASES``): http bearer, oauth2
and openIdConnect → ``bearer``, ``PREFIX_TOKEN``; oauth2 with a clientCredentials flow →
``oauth2_client_credentials``, ``PREFIX_CLIENT_ID`` and ``PREFIX_CLIENT_SECRET``; http basic → ``basic``,
``PREFIX_USERNAME`` and ``PREFIX_PASSWORD``; apiKey in a header or the query → ``api_key``, ``PREFIX_API_KEY``;
apiKey in a cookie → ``headers`` (``Cookie``), ``PREFIX_COOKIE`` (``name=value``).

When two schemes would read the same variable, each variable also carries its scheme's name
(``PREFIX_READ_KEY_API_KEY``). Each profile names its scheme (``security_scheme``), so an operation's own
``security`` picks the profiles it sends; the collection's profile is the one the most operations require."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Tool
from qlab.project.model import MAX_NAME
from qlab.project.starter.model import SecurityScheme

_BASES: dict[str, tuple[str, ...]] = {
    "bearer": ("TOKEN",),
    "client_credentials": ("CLIENT_ID", "CLIENT_SECRET"),
    "basic": ("USERNAME", "PASSWORD"),
    "api_key": ("API_KEY",),
    "cookie": ("COOKIE",),
}


@dataclass(frozen=True, slots=True)
class Profile:
    """One auth profile to write: its name, its keys as qlab.yaml spells them (in order), the variables it
    reads, and the scheme it serves."""

    name: str
    scheme: SecurityScheme
    keys: dict[str, Any]
    env: tuple[str, ...]


def _family(scheme: SecurityScheme) -> str:
    return "cookie" if scheme.kind == "api_key" and scheme.where == "cookie" else scheme.kind


def _snake(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)).strip("_").upper()


def profile_name(scheme_name: str, taken: set[str]) -> str:
    """A valid, unused profile name for a scheme (``^[A-Za-z0-9][A-Za-z0-9_.-]*$``, at most ``MAX_NAME``
    characters)."""
    name = (re.sub(r"[^A-Za-z0-9_.-]+", "_", scheme_name).lstrip("_.-") or "auth")[:MAX_NAME]
    candidate, n = name, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = name[: MAX_NAME - len(suffix)] + suffix, n + 1
    taken.add(candidate)
    return candidate


def profiles(schemes: Sequence[SecurityScheme], *, prefix: str) -> list[Profile]:
    """The profiles of the supported schemes, in document order (see the module docstring)."""
    supported = [s for s in schemes if s.kind != "unsupported"]
    shared = Counter(_family(s) for s in supported)
    taken: set[str] = set()
    out = []
    for scheme in supported:
        family = _family(scheme)
        snake = _snake(scheme.name)

        def var(base: str, family: str = family, snake: str = snake) -> str:
            if shared[family] == 1 or not snake:
                return f"{prefix}_{base}"
            return f"{prefix}_{snake}" if snake.endswith(base) else f"{prefix}_{snake}_{base}"

        names = tuple(var(base) for base in _BASES[family])
        out.append(Profile(profile_name(scheme.name, taken), scheme, _keys(scheme, names), names))
    return out


def _keys(scheme: SecurityScheme, names: tuple[str, ...]) -> dict[str, Any]:
    if scheme.kind == "bearer":
        return _with(scheme, "bearer", token_env=names[0])
    if scheme.kind == "client_credentials":
        keys = _with(scheme, "oauth2_client_credentials", token_url=scheme.token_url, client_id_env=names[0],
                     client_secret_env=names[1])  # fmt: skip
        return {**keys, "scopes": list(scheme.scopes)} if scheme.scopes else keys
    if scheme.kind == "basic":
        return _with(scheme, "basic", username_env=names[0], password_env=names[1])
    if scheme.where == "cookie":
        return _with(scheme, "headers", headers={"Cookie": names[0]})
    where = "query" if scheme.where == "query" else "header"
    return _with(scheme, "api_key", **{where: scheme.key}, value_env=names[0])


def _with(scheme: SecurityScheme, kind: str, **keys: Any) -> dict[str, Any]:
    return {"type": kind, "security_scheme": scheme.name, **keys}


def collection_profile(tools: Sequence[Tool], made: Sequence[Profile]) -> Profile | None:
    """The profile of the scheme the most operations require (the first in document order on a tie); None
    when no operation requires one of them (no security, or only optional security ``{}``)."""
    by_scheme = {p.scheme.name: p for p in made}
    counts: Counter[str] = Counter()
    for tool in tools:
        if not tool.security or not all(requirement for requirement in tool.security):
            continue
        for scheme in tool.security[0]:
            if scheme in by_scheme:
                counts[scheme] += 1
    if not counts:
        return None
    best = max(counts.values())
    return next(p for p in made if counts.get(p.scheme.name) == best)

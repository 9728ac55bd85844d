"""Does an auth profile exist for the collection's security requirements, and does it fit the schemes?

- ``not_required``: no tool requires auth (no security requirement, or an optional ``{}`` alternative);
- ``auth_profile_missing`` (the build's reason code): tools require auth but ``collection.auth`` names no
  profile, or one that ``auth_profiles`` does not define;
- ``ok``: a profile exists. Each required scheme is compared with the profile's type (http bearer, oauth2,
  openIdConnect: ``bearer`` or ``oauth2_client_credentials``; http basic: ``basic``; apiKey: ``api_key`` with
  the same name, or a ``headers`` profile setting that header); a mismatch is reported
  (``auth_profile_mismatch``) without blocking: the scheme may be served another way.

A profile that names a ``security_scheme`` serves that scheme (operation-level security picks it at run
time) and is compared with it instead; tools whose requirement such profiles serve need no collection profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.collection.model import Collection
from qlab.project.model import AuthProfile, Config

_BEARER_LIKE = ("bearer", "oauth2_client_credentials")


def check_auth(collection: Collection, config: Config) -> dict[str, Any]:
    requiring = [t.id for t in collection.tools if t.security and all(req for req in t.security)]
    schemes = sorted({name for t in collection.tools for req in t.security for name in req})
    definitions: dict[str, Mapping[str, Any]] = {}
    for source in collection.sources:
        for name, scheme in (source.get("security_schemes") or {}).items():
            definitions.setdefault(name, scheme)
    profile_name = config.collection.auth_profile
    profile = config.auth_profiles.get(profile_name) if profile_name else None
    serving = {p.security_scheme: p for p in config.auth_profiles.values() if p.security_scheme}
    unserved = [
        t.id
        for t in collection.tools
        if t.id in requiring and not any(set(req) <= set(serving) for req in t.security)
    ]
    out: dict[str, Any] = {
        "required": bool(requiring),
        "tools_requiring_auth": len(requiring),
        "schemes": schemes,
        "profile": profile_name,
        "profile_exists": profile is not None,
        "mismatches": [],
    }
    if not requiring:
        out["status"] = "not_required"
    elif profile is None and unserved:
        out["status"] = "auth_profile_missing"
        out["message"] = f"{len(unserved)} tool(s) require auth ({', '.join(schemes)}) but " + (
            f"auth profile {profile_name!r} is not defined in auth_profiles"
            if profile_name
            else "collection.auth names no auth profile"
        )
    else:
        out["status"] = "ok"
        out["mismatches"] = mismatches(profile, schemes, definitions, serving=serving)
    return out


def mismatches(
    profile: AuthProfile | None,
    schemes: Sequence[str],
    definitions: Mapping[str, Mapping[str, Any]],
    *,
    serving: Mapping[str, AuthProfile] | None = None,
) -> list[str]:
    """One sentence per required scheme its profile (the one naming it as ``security_scheme``, else
    ``profile``) cannot serve."""
    out = []
    for name in schemes:
        scheme = definitions.get(name)
        chosen = (serving or {}).get(name, profile)
        if scheme is None or chosen is None:
            continue  # the spec does not define it, or no profile claims it: nothing to compare
        if not fits(chosen, scheme):
            out.append(
                f"auth profile {chosen.name!r} ({chosen.type}) does not fit scheme {name!r} ({_describe(scheme)})"
            )
    return out


def fits(profile: AuthProfile, scheme: Mapping[str, Any]) -> bool:
    kind = str(scheme.get("type", "")).lower()
    if kind == "http":
        http_scheme = str(scheme.get("scheme", "")).lower()
        if http_scheme == "basic":
            return profile.type == "basic" or _sets_header(profile, "authorization")
        return profile.type in _BEARER_LIKE or _sets_header(profile, "authorization")
    if kind in ("oauth2", "openidconnect"):
        return profile.type in _BEARER_LIKE or _sets_header(profile, "authorization")
    if kind == "apikey":
        where, key = str(scheme.get("in", "header")).lower(), str(scheme.get("name", "")).lower()
        if profile.type == "api_key":
            given = profile.header if where == "header" else profile.query if where == "query" else None
            return given is not None and given.lower() == key
        return where == "header" and _sets_header(profile, key)
    return True  # mutualTLS and unknown types: not something a profile describes


def _sets_header(profile: AuthProfile, header: str) -> bool:
    return profile.type == "headers" and header in {h.lower() for h in profile.headers}


def _describe(scheme: Mapping[str, Any]) -> str:
    kind = str(scheme.get("type", "?"))
    if kind == "http":
        return f"http {scheme.get('scheme', '')}".strip()
    if kind == "apiKey":
        return f"apiKey in {scheme.get('in', '?')} {scheme.get('name', '?')}"
    return kind

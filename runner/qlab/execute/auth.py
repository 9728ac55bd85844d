"""Auth profiles and the auth-readiness preflight.

A profile says where credentials come from, never what they are. Before any request of a case, the preflight
resolves the case's profile into request headers (or query parameters) and classifies what went wrong:

- ``auth_context_required``: an env var the profile reads is unset or empty;
- ``auth_profile_missing``: the tool or collection requires auth, but no profile is configured, or the name
  given does not resolve to one;
- ``auth_header_resolution_failed``: the token command failed or the token endpoint gave no token.

Which profile a request sends: the operation's ``security`` picks it when profiles name security schemes
(``AuthResolver.choose``), else the environment's profile, else the collection's.

A profile is resolved once per run (thread-safe) and cached; an OAuth2 token is re-fetched when it expires.
Readiness records header NAMES and reason codes only; every resolved value goes to ``secrets`` for the
scrubber.
"""

from __future__ import annotations

import base64
import os
import re
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from qlab.adapters import http, strictjson
from qlab.collection.model import Tool
from qlab.project.model import AuthProfile, Limits

ReadinessStatus = Literal["ready", "not_required", "not_ready"]
COMMAND_TIMEOUT_SEC = 30.0
TOKEN_REPLY_BYTES = Limits().response_bytes  # a token endpoint's answer, like any response a case reads
MIN_PRINTED_LINE = 8  # a token command's output lines and words registered as secrets (see ``_printed``)
MIN_PRINTED_WORD = 12


@dataclass(frozen=True, slots=True)
class AuthResolution:
    """The outcome of a preflight. ``headers``/``params`` hold secret values: never store them."""

    status: ReadinessStatus
    profile: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    reason_codes: tuple[str, ...] = ()
    message: str = ""
    missing_env: tuple[str, ...] = ()  # names of unset env vars (names are not secret)
    secrets: tuple[str, ...] = ()
    expires_at: float | None = None  # time.monotonic() instant, for OAuth2 tokens

    @property
    def ready(self) -> bool:
        return self.status != "not_ready"

    @property
    def reason(self) -> str | None:
        return self.reason_codes[0] if self.reason_codes else None

    def readiness(self) -> dict[str, Any]:
        """The ``auth_readiness`` result object: names and reason codes only."""
        out: dict[str, Any] = {
            "status": self.status,
            "profile": self.profile,
            "headers": sorted(self.headers),
            "reason_codes": list(self.reason_codes),
        }
        if self.params:
            out["query_params"] = sorted(self.params)
        if self.missing_env:
            out["missing_env"] = list(self.missing_env)
        if self.message:
            out["message"] = self.message
        return out


NOT_REQUIRED = AuthResolution("not_required")


def combined(resolutions: list[AuthResolution]) -> AuthResolution:
    """Several resolutions sent together (the profiles of one security requirement, or of a case's steps): the
    first that is not ready, else one ``ready`` resolution with every header, parameter and secret; profiles
    named ``a+b``. Not-required ones add nothing."""
    used = [r for r in resolutions if r.status != "not_required"]
    if not used:
        return NOT_REQUIRED
    failed = next((r for r in used if not r.ready), None)
    if failed is not None:
        return failed
    if len(used) == 1:
        return used[0]
    expiries = [r.expires_at for r in used if r.expires_at is not None]
    return AuthResolution(
        "ready",
        "+".join(dict.fromkeys(str(r.profile) for r in used)),
        {k: v for r in used for k, v in r.headers.items()},
        {k: v for r in used for k, v in r.params.items()},
        secrets=tuple(s for r in used for s in r.secrets),
        expires_at=min(expiries) if expiries else None,
    )


def requires_auth(tools: list[Tool], *, collection_profile: str | None) -> bool:
    """True when the collection names an auth profile, or a tool has a security requirement that is not
    optional (OpenAPI's empty requirement ``{}`` makes auth optional)."""
    if collection_profile:
        return True
    return any(tool.security and all(req for req in tool.security) for tool in tools)


def _failed(profile: str | None, code: str, message: str, *, missing: tuple[str, ...] = ()) -> AuthResolution:
    return AuthResolution("not_ready", profile, reason_codes=(code,), message=message, missing_env=missing)


class _Unset(Exception):
    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__(", ".join(names))
        self.names = names


class _Unresolved(Exception):
    def __init__(self, message: str, *, missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.missing = missing


# a shell variable a command reads: $NAME or ${NAME}; ${NAME:-x} (and -, =, ?, +) states its own fallback
_SHELL_VAR = re.compile(r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=?+])?|([A-Za-z_][A-Za-z0-9_]*))")


def unset_in_command(command: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The environment variables a token command reads without a fallback that are unset or empty in
    ``environ``: what a fork pull request, which has no secrets, is missing. Names only, never values."""
    found = []
    for braced, fallback, bare in _SHELL_VAR.findall(command):
        name = braced or bare
        if name and not (braced and fallback) and not environ.get(name, "").strip():
            found.append(name)
    return tuple(dict.fromkeys(found))


class AuthResolver:
    """Resolves profiles by name for one run; results are cached per profile and thread-safe."""

    def __init__(
        self,
        profiles: Mapping[str, AuthProfile],
        *,
        environ: Mapping[str, str] | None = None,
        client: http.Client | None = None,
        command_timeout: float = COMMAND_TIMEOUT_SEC,
        max_bytes: int = TOKEN_REPLY_BYTES,
    ) -> None:
        self._profiles = profiles
        self._environ = environ if environ is not None else os.environ
        self.http = client
        self.max_bytes = max_bytes
        self._command_timeout = command_timeout
        self._cache: dict[str, AuthResolution] = {}
        # security scheme -> the profile that answers it (``AuthProfile.security_scheme``)
        self._serving = {p.security_scheme: n for n, p in profiles.items() if p.security_scheme}
        self._seen: set[str] = (
            set()
        )  # every value read from the environment, even when resolution then failed
        self._lock = threading.Lock()

    def preflight(self, name: str | None, *, required: bool) -> AuthResolution:
        """Resolve profile ``name`` (None: no profile configured) for a case that does or does not require auth."""
        if name is None:
            if required:
                return _failed(
                    None,
                    "auth_profile_missing",
                    "the tool or collection requires auth but no auth profile is configured",
                )
            return NOT_REQUIRED
        profile = self._profiles.get(name)
        if profile is None:
            known = ", ".join(sorted(self._profiles)) or "none"
            return _failed(
                name, "auth_profile_missing", f"auth profile {name!r} is not defined (auth_profiles: {known})"
            )
        with self._lock:  # one resolution per profile, even with many cases in flight
            cached = self._cache.get(name)
            if cached is not None and (cached.expires_at is None or cached.expires_at > time.monotonic()):
                return cached
            resolved = self._resolve(profile)
            self._cache[name] = resolved
            return resolved

    def choose(self, tool: Tool) -> AuthResolution | None:
        """The auth operation-level security picks for a request to ``tool``, resolved; None when no profile
        names a security scheme, or none of the tool's requirements is served by such profiles (the caller
        then sends the environment's profile).

        Of the tool's requirements (alternatives), the first served one that is ready wins; an optional one
        (``{}``) means none is sent when no served one is ready; else the first served one's failure. A tool
        that requires nothing (``security: []``, or no security at all) gets ``NOT_REQUIRED``."""
        if not self._serving:
            return None
        if not tool.security:
            return NOT_REQUIRED
        failure: AuthResolution | None = None
        for requirement in tool.security:
            if not requirement or not set(requirement) <= set(self._serving):
                continue
            resolved = combined([self.preflight(self._serving[s], required=True) for s in requirement])
            if resolved.ready:
                return resolved
            failure = failure or resolved
        if any(not requirement for requirement in tool.security):
            return NOT_REQUIRED
        return failure

    @property
    def secrets(self) -> set[str]:
        """Every secret value resolved (or read from the environment) so far."""
        return self._seen | {s for r in self._cache.values() for s in r.secrets}

    # ------------------------------------------------------------------------------------------ resolution

    def _resolve(self, p: AuthProfile) -> AuthResolution:
        try:
            headers, params, secrets, expires = self._by_type(p)
        except _Unset as exc:
            return _failed(
                p.name,
                "auth_context_required",
                f"auth profile {p.name!r}: env var(s) unset or empty: {exc}",
                missing=exc.names,
            )
        except _Unresolved as exc:
            return _failed(
                p.name,
                "auth_header_resolution_failed",
                f"auth profile {p.name!r}: {exc}",
                missing=exc.missing,
            )
        return AuthResolution(
            "ready", p.name, headers, params, secrets=tuple(s for s in secrets if s), expires_at=expires
        )

    def _by_type(self, p: AuthProfile) -> tuple[dict[str, str], dict[str, str], list[str], float | None]:
        if p.type == "bearer":
            token = self._env(p.token_env) if p.token_env else self._command(p.token_command)
            value = f"Bearer {token}"
            return {"Authorization": value}, {}, [token, value], None
        if p.type == "api_key":
            key = self._env(p.value_env)
            if p.query:
                return {}, {p.query: key}, [key], None
            return {p.header or "X-API-Key": key}, {}, [key], None
        if p.type == "basic":
            user, password = self._envs(p.username_env, p.password_env)
            encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
            return (
                {"Authorization": f"Basic {encoded}"},
                {},
                [user, password, encoded, f"Basic {encoded}"],
                None,
            )
        if p.type == "oauth2_client_credentials":
            return self._oauth2(p)
        values = self._envs(*p.headers.values())  # type "headers": header name -> env var name
        headers = dict(zip(p.headers.keys(), values, strict=True))
        return headers, {}, list(values), None

    def _env(self, name: str | None) -> str:
        return self._envs(name)[0]

    def _envs(self, *names: str | None) -> list[str]:
        unset = tuple(n or "<not configured>" for n in names if not n or not self._environ.get(n, "").strip())
        if unset:
            raise _Unset(unset)
        values = [self._environ[n].strip() for n in names if n]
        self._seen.update(values)
        return values

    def _command(self, command: str | None) -> str:
        if not command:
            raise _Unresolved("neither token_env nor token_command is set")
        import subprocess  # here: only a token_command profile needs it (startup time)

        argv = ["cmd", "/c", command] if sys.platform == "win32" else ["/bin/sh", "-c", command]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=self._command_timeout,
                env=dict(self._environ),
            )  # its exit code is read below
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _Unresolved(f"token command failed: {type(exc).__name__}") from None
        token = done.stdout.strip()
        # What the command printed is secret, on either stream and whether it worked or not: a failing command
        # often names the token it could not refresh. All of it is registered for scrubbing, none is shown.
        self._seen.update(_printed(done.stdout, done.stderr))
        unset = unset_in_command(command, self._environ)
        reads = f"; it reads {', '.join(unset)}, not set or empty here" if unset else ""
        if done.returncode != 0:
            said = " (its output is not shown: it may hold a token; run the command yourself to see it)"
            raise _Unresolved(
                f"token command exited with {done.returncode}{said if done.stderr.strip() else ''}{reads}",
                missing=unset,
            )
        if not token:
            raise _Unresolved(f"token command printed nothing{reads}", missing=unset)
        return token

    def _oauth2(self, p: AuthProfile) -> tuple[dict[str, str], dict[str, str], list[str], float | None]:
        client_id, client_secret = self._envs(p.client_id_env, p.client_secret_env)
        if not p.token_url:
            raise _Unresolved("oauth2_client_credentials needs token_url")
        form = {"grant_type": "client_credentials"}
        if p.scopes:
            form["scope"] = " ".join(p.scopes)
        basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        client = self.http or http.make_client(timeout=30.0)
        try:
            response, body = http.call(
                client,
                "POST",
                p.token_url,
                data=form,
                headers={"Authorization": f"Basic {basic}", "Accept": "application/json"},
                max_bytes=self.max_bytes,
            )
            status, payload = response.status_code, _json(body)
        except http.BodyTooLarge as exc:
            raise _Unresolved(f"token endpoint {p.token_url}: {exc}") from None
        except http.HTTPError as exc:
            raise _Unresolved(f"token endpoint {p.token_url} unreachable: {type(exc).__name__}") from None
        finally:
            if self.http is None:
                client.close()
        if status >= 400:
            raise _Unresolved(f"token endpoint {p.token_url} answered {status}")
        token = payload.get("access_token") if isinstance(payload, dict) else None
        if not isinstance(token, str) or not token:
            raise _Unresolved(f"token endpoint {p.token_url} gave no access_token")
        kind = str(payload.get("token_type") or "")
        kind = "Bearer" if kind.lower() in ("", "bearer") else kind  # no type, or any spelling of bearer
        lifetime = payload.get("expires_in")
        # re-fetch 30 s before expiry so a long run never sends a stale token
        expires = time.monotonic() + float(lifetime) - 30 if isinstance(lifetime, (int, float)) else None
        value = f"{kind} {token}"
        return {"Authorization": value}, {}, [token, value, client_secret, basic], expires


def _printed(*streams: str) -> set[str]:
    """A command's output as secrets: each stream whole, each line and each word that is long enough to be a
    credential rather than ordinary words (a short line such as ``error`` would be redacted everywhere)."""
    out: set[str] = set()
    for text in streams:
        pieces = [text.strip(), *(line.strip() for line in text.splitlines())]
        out |= {p for p in pieces if len(p) >= MIN_PRINTED_LINE}
        out |= {w for w in text.split() if len(w) >= MIN_PRINTED_WORD}
    return out


def _json(body: bytes) -> Any:
    try:
        return strictjson.json_of(body)
    except (ValueError, RecursionError):
        return None

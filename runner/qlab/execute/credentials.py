"""What a run knows is secret before it sends anything: every credential qlab.yaml points at, read once so the
scrubber knows it before any byte is written.

- every auth profile's environment variables that are set (tokens, keys, passwords, client secrets, the
  ``headers`` profile's values — a ``Cookie: sid=…`` string registers each cookie value too, see
  ``qlab.adapters.scrub.secret_parts``);
- the userinfo of every environment's ``base_url`` (``http://user:password@host``);
- the values of an environment's static ``headers``, a dev server's ``env`` and a live MCP server's ``env``
  whose name says secret (``X-Api-Key``, ``DB_PASSWORD``, ``SESSION_COOKIE``, …);
- the http engine's header values and the LLM's API key.

What the run learns later (a token command's output, an OAuth2 token, a Set-Cookie, sensitive field values) is
registered by the execute stage as it appears.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from qlab.project.model import Config

# a name that says its value is secret (an env var or a header)
SECRET_NAME = re.compile(
    r"token|secret|passw|pwd|api[-_]?key|apikey|auth|cookie|credential|session|signature|private", re.I
)


@dataclass(frozen=True, slots=True)
class BaseURL:
    """An environment's ``base_url`` split for sending: the URL without userinfo, and the Basic credentials the
    userinfo held (``http://user:pw@host``), which a request carries only when its auth profile sets no
    ``Authorization`` of its own (httpx would otherwise put them over the profile's bearer token)."""

    url: str
    basic: str | None = None  # the Authorization value from the userinfo
    secrets: tuple[str, ...] = ()  # the password, user:password and the Basic value, for the scrubber

    @classmethod
    def of(cls, url: str) -> BaseURL:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return cls(url)
        userinfo, _, hostport = parts.netloc.rpartition("@")
        user, _, password = (unquote(p) for p in userinfo.partition(":"))
        pair = f"{user}:{password}"
        basic = "Basic " + base64.b64encode(pair.encode()).decode()
        stripped = urlunsplit(parts._replace(netloc=hostport))
        secrets = tuple(s for s in (password, pair if password else "", basic, userinfo) if s)
        return cls(stripped, basic, secrets)


def display_url(url: str) -> str:
    """``url`` without its userinfo, for messages and logs (a password in ``base_url`` is never shown)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def known_secrets(config: Config, environ: Mapping[str, str]) -> set[str]:
    """Every secret value of ``config`` that ``environ`` (and qlab.yaml after interpolation) holds."""
    found: set[str] = set()

    def read(names: Iterable[str | None]) -> None:
        found.update(v.strip() for n in names if n and (v := environ.get(n, "")).strip())

    for profile in config.auth_profiles.values():
        read(profile.env_names())
    for env in config.environments.values():
        found.update(BaseURL.of(env.base_url).secrets)
        found.update(_named(env.headers))
        if env.server is not None:
            found.update(_named(env.server.env))
    for source in config.collection.sources:
        found.update(_named(source.env))
    engine = config.engine
    read(engine.headers.values())
    if engine.llm is not None:
        read([engine.llm.api_key_env])
    return found


def _named(values: Mapping[str, str]) -> set[str]:
    return {v.strip() for k, v in values.items() if SECRET_NAME.search(k) and v.strip()}

"""What a starter project is made of: the spec's facts (tools, servers, security schemes) and the figures
measured by running its gates once, with the thresholds written from them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from qlab.collection.model import Tool

# A base URL written into qlab.yaml's ``${VAR:-default}``: printable, no spaces, and none of ``$ { }`` (which
# would end or start an interpolation) nor quotes or backslashes
_CLEAN_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#\[\]@!&'()*+,;=%-]+\Z")
MAX_URL = 2048


def env_prefix(project: str) -> str:
    """An environment variable prefix from a project name: ``my-api`` → ``MY_API``, ``2024 api`` → ``API_2024_API``."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", project).strip("_").upper()
    if not words:
        return "API"
    return f"API_{words}" if words[0].isdigit() else words


def clean_url(url: str) -> bool:
    """True for an http(s) URL qlab.yaml can carry as an interpolation default (see ``_CLEAN_URL``)."""
    return len(url) <= MAX_URL and _CLEAN_URL.match(url) is not None and "'" not in url


@dataclass(frozen=True, slots=True)
class SecurityScheme:
    """One security scheme of the spec, as much as an auth profile needs. ``kind``: ``bearer`` (http bearer,
    oauth2 without a client-credentials flow, openIdConnect), ``client_credentials``, ``basic``, ``api_key``
    (``where`` is header, query or cookie; ``key`` the name) or ``unsupported`` (``detail`` says what)."""

    name: str
    kind: Literal["bearer", "client_credentials", "basic", "api_key", "unsupported"]
    detail: str  # the scheme in the spec's words, e.g. "oauth2 (implicit)", "apiKey in header api_key"
    where: str = ""
    key: str = ""
    token_url: str = ""
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Starter:
    """The inputs of a starter project.

    ``source``: what qlab.yaml's source says (the pinned copy, or the spec's location); ``spec_label``: how the
    header comment names the spec the user gave; ``base_url``: the environment's default (``--base-url``, else
    the spec's first server that qlab.yaml can carry, see :func:`clean_url`; None: none). ``remote_refs`` and
    ``headers_env`` (header name -> environment variable) go on a source that was not pinned, so the next build
    reads it as init did."""

    project: str
    kind: Literal["openapi", "swagger"]
    source: str
    spec_label: str
    tools: tuple[Tool, ...]
    title: str = ""
    base_url: str | None = None
    schemes: tuple[SecurityScheme, ...] = ()
    source_note: str = ""  # a comment beside the source (a pinned copy, or why the spec was not pinned)
    remote_refs: bool = False
    headers_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def env_prefix(self) -> str:
        """``my-api`` → ``MY_API``: the prefix of every environment variable the starter reads."""
        return env_prefix(self.project)


@dataclass(frozen=True, slots=True)
class Measured:
    """The figures of one gate's suite as a first run measured them (``metric -> value``, the values the gate
    compares), how many cases produced them and how many of those failed, why they failed, and the HTTP status
    of the failed requests the API rejected (401, 403, 5xx)."""

    figures: Mapping[str, float | None] = field(default_factory=dict)
    cases: int = 0
    reasons: Mapping[str, int] = field(default_factory=dict)  # failure reason -> cases that failed with it
    failing: int = 0
    rejected: Mapping[int, int] = field(default_factory=dict)  # HTTP status -> failed cases that got it


@dataclass(frozen=True, slots=True)
class Threshold:
    """One threshold to write: ``metric >= value`` (``value`` a decimal as written; for the build gate the
    ``schema_coverage_below`` value), the figure the first run recorded, and a note for beside it."""

    metric: str
    value: str
    measured: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class Figures:
    """What the measuring run found, and the thresholds written from it (gate name -> its thresholds; the
    build gate's is its ``schema_coverage_below``). ``execute`` is None when the execute suite was not gated;
    ``execute_note`` then says why and how to turn it on."""

    schema_coverage: float | None = None
    search: Measured = field(default_factory=Measured)
    k: int = 5
    execute: Measured | None = None
    execute_note: str = ""
    thresholds: Mapping[str, tuple[Threshold, ...]] = field(default_factory=dict)

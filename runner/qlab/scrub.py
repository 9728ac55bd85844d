"""Scrubbing: no secret value reaches a result, JUnit, a summary, a log or the console.

Two rules, applied to any JSON-like object (dicts, lists, strings, numbers):

- **by value**: every occurrence of a known secret (auth tokens, header values, passwords, cookies) inside any
  string is replaced by ``[REDACTED]``, also in the encoded forms a secret takes in our outputs (JSON escaped,
  URL encoded, HTML/XML escaped);
- **by key**: the value under a secret-bearing key (``Authorization``, ``Cookie``, ``Set-Cookie``,
  ``access_token``, ...) or a configured sensitive field (``email``, ``userId``) is replaced whatever it is.

Long strings are truncated after redaction (so a secret is never cut in half and left partly visible), saying
how much was cut. ``find_leaks`` is the scrub check: it scans final artifacts for every known secret; the learn
gate fails with ``scrub_failed`` on a hit.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"
DEFAULT_MAX_CHARS = 4000

# Keys whose values are secrets whatever they hold, compared after normalization (lower case, no - or _).
SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxyauthorization",
        "cookie",
        "cookies",
        "setcookie",
        "xapikey",
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "clientsecret",
        "password",
        "passwd",
        "secret",
        "token",
        "bearer",
    }
)


def normalize_key(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


def secret_variants(secret: str) -> set[str]:
    """The forms ``secret`` takes in our outputs: raw, JSON-escaped, URL-encoded, HTML/XML-escaped."""
    variants = {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        html.escape(secret, quote=True),
    }
    return {v for v in variants if v}


class Scrubber:
    """A compiled scrubber: build once per set of secrets, apply to many objects."""

    __slots__ = ("_key_cache", "_key_texts", "_keys", "_max_chars", "_pattern")

    def __init__(
        self,
        secrets: Iterable[str],
        *,
        sensitive_fields: Iterable[str] = (),
        max_chars: int = DEFAULT_MAX_CHARS,
    ):
        variants: set[str] = set()
        for secret in secrets:
            if secret:
                variants |= secret_variants(secret)
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(variants, key=lambda v: (-len(v), v))
        self._pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self._keys = frozenset(SECRET_KEYS | {normalize_key(f) for f in sensitive_fields})
        self._key_cache: dict[
            str, bool
        ] = {}  # key -> is it secret (keys repeat a lot: event, path, status, ...)
        self._max_chars = max_chars
        self._key_texts: dict[str, str] = {}  # key -> the key with secrets replaced (a secret can be a key)

    @property
    def knows_secrets(self) -> bool:
        """False when no secret value was given (only the key rules and truncation apply)."""
        return self._pattern is not None

    def text(self, value: str) -> str:
        """``value`` with every secret replaced and truncated to ``max_chars``."""
        if self._pattern is not None:
            value = self._pattern.sub(REDACTED, value)
        if 0 < self._max_chars < len(value):
            return truncate(value, self._max_chars)
        return value

    def _key_text(self, key: str) -> str:
        clean = self._key_texts.get(key)
        if clean is None:
            pattern = self._pattern
            clean = self._key_texts[key] = pattern.sub(REDACTED, key) if pattern is not None else key
        return clean

    def __call__(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is str:
            return self.text(obj)
        if kind in _SCALARS:
            return obj
        if kind is dict or (kind is not list and kind is not tuple and isinstance(obj, Mapping)):
            out: dict[Any, Any] = {}
            cache = self._key_cache
            for key, value in obj.items():
                secret = cache.get(key) if type(key) is str else False
                if secret is None:
                    secret = cache[key] = normalize_key(key) in self._keys
                if self._pattern is not None and type(key) is str:
                    key = self._key_text(key)  # a secret as a key: an echoed cookie jar, a map keyed by token
                vkind = type(value)
                if secret and value is not None:
                    out[key] = _redact_whole(value)
                elif vkind in _SCALARS:  # the common case, inlined: numbers, flags, None
                    out[key] = value
                elif vkind is str:
                    out[key] = self.text(value)
                else:
                    out[key] = self(value)
            return out
        if kind is list or kind is tuple:
            return [self(item) for item in obj]
        if isinstance(obj, str):  # a str subclass (an Enum value)
            return self.text(str(obj))
        return obj


_SCALARS = frozenset({int, float, bool, type(None)})


def _redact_whole(value: Any) -> Any:
    """A secret-keyed value: keep the shape (so a dict of cookies stays a dict), drop every leaf."""
    if isinstance(value, Mapping):
        return {k: REDACTED for k in value}
    if isinstance(value, (list, tuple)):
        return [REDACTED for _ in value]
    if isinstance(value, bool):
        return value  # a flag such as {"token": true} carries no secret
    return REDACTED


def truncate(text: str, max_chars: int) -> str:
    """Cut ``text`` to ``max_chars`` and say how much was dropped."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}…[truncated {len(text) - max_chars} of {len(text)} chars]"


@lru_cache(maxsize=64)
def _cached(secrets: frozenset[str], fields: tuple[str, ...], max_chars: int) -> Scrubber:
    return Scrubber(secrets, sensitive_fields=fields, max_chars=max_chars)


def scrubber(
    secrets: Iterable[str], *, sensitive_fields: Iterable[str] = (), max_chars: int = DEFAULT_MAX_CHARS
) -> Scrubber:
    """A (cached) Scrubber for these secrets and fields."""
    return _cached(frozenset(s for s in secrets if s), tuple(sorted(set(sensitive_fields))), max_chars)


def scrub(
    obj: Any,
    secrets: Iterable[str],
    *,
    sensitive_fields: Iterable[str] = (),
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Any:
    """A copy of ``obj`` with secret values and sensitive fields replaced by ``[REDACTED]``, long strings cut.

    Tuples come back as lists (the result is JSON-shaped).
    """
    return scrubber(secrets, sensitive_fields=sensitive_fields, max_chars=max_chars)(obj)


def scrub_text(text: str, secrets: Iterable[str], *, max_chars: int = 0) -> str:
    """``text`` with every secret replaced; ``max_chars=0`` keeps its length (for log lines)."""
    return scrubber(secrets, max_chars=max_chars).text(text)


@dataclass(frozen=True, slots=True)
class Leak:
    """A secret found in an artifact: the file and the index of the secret in the list given (never its value)."""

    path: Path
    secret_index: int


SCAN_BLOCK = 1 << 20  # bytes read at a time: a 120 MB result artifact is scanned without being held


def find_leaks(paths: Iterable[Path], secrets: Iterable[str]) -> list[Leak]:
    """Scan each file for every secret (in every encoded form); one Leak per (file, secret) found.

    A directory is scanned recursively. A missing file is skipped (an artifact that was not written leaks
    nothing). Files are read in blocks that overlap by the longest form less one byte, so a secret split across
    two blocks is still found.
    """
    needles = [[v.encode("utf-8") for v in secret_variants(secret)] if secret else [] for secret in secrets]
    overlap = max((len(form) for forms in needles for form in forms), default=1) - 1
    leaks: list[Leak] = []
    for path in _files(paths):
        found: set[int] = set()
        try:
            with open(path, "rb") as handle:
                tail = b""
                while len(found) < len(needles):
                    block = handle.read(SCAN_BLOCK)
                    if not block:
                        break
                    data = tail + block
                    for index, forms in enumerate(needles):
                        if index not in found and any(form in data for form in forms):
                            found.add(index)
                    tail = data[-overlap:] if overlap else b""
        except OSError:
            continue
        leaks += [Leak(path, index) for index in sorted(found)]
    return leaks


def _files(paths: Iterable[Path]) -> Iterable[Path]:
    for path in paths:
        path = Path(path)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path

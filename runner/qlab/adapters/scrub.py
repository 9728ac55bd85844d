"""Scrubbing: no secret value reaches a result, JUnit, a summary, a log or the console.

Two rules, over any JSON-like object:

- **by value**: every occurrence of a known secret inside any string becomes ``[REDACTED]``, also in its encoded
  forms (``secret_variants``), as a whole number only when it is one, and when a line break cuts it in two;
- **by key**: the value under a secret-bearing key (``SECRET_KEYS``) or a sensitive field (``IDENTITY_FIELDS``
  and each one qlab.yaml names) is replaced whatever it is.

A secret is registered once, in a run's ``SecretSet``, with the parts it carries (``secret_parts``). Every
writer of a run passes its text through the run's scrubber (``Scrubber.stream`` keeps a secret that straddles
two pieces whole); long strings are cut after redaction. ``find_leaks`` is the scrub check
(``scrub_failed``). Text printed or logged line by line also has GitHub workflow commands made inert
(``neutralize_commands``), except qlab's own (``workflow_command``)."""

from __future__ import annotations

import base64
import html
import io
import json
import re
import sys
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, quote_plus

from qlab.engine.types import SearchRow

REDACTED = "[REDACTED]"
DEFAULT_MAX_CHARS = 4000
MIN_PART_CHARS = (
    6  # a part of a secret shorter than this ("en" of lang=en) is too common to redact everywhere
)
# a sensitive field's value shorter than this is replaced under its key only, not by value
MIN_VALUE_CHARS = 4
MIN_ENCODED_CHARS = 12  # base64 forms only for secrets this long: a shorter one's encoded core matches noise
STREAM_BLOCK = 1 << 16  # characters scrubbed at a time by ``Scrubber.stream``

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


# Identity-like fields: sensitive in every output unless qlab.yaml says ``output.identity_fields: kept``. Matched
# as every key is (case, ``-`` and ``_`` ignored: ``userId`` is also ``user_id`` and ``USER-ID``).
IDENTITY_FIELDS = (
    "userId",
    "username",
    "customerId",
    "accountId",
    "email",
    "emailAddress",
    "phone",
    "phoneNumber",
    "mobile",
    "mobileNumber",
    "firstName",
    "lastName",
    "fullName",
    "dateOfBirth",
    "birthDate",
    "address",
    "streetAddress",
    "ipAddress",
    "ssn",
    "nationalId",
    "passportNumber",
    "taxId",
)


def normalize_key(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


@cache
def key_set(fields: tuple[str, ...]) -> frozenset[str]:
    """``fields`` as the key rule compares them (``normalize_key``): made once per set of fields."""
    return frozenset(normalize_key(f) for f in fields)


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
_PAIRS = re.compile(r"[;&]")
_SCHEMES = ("bearer ", "basic ", "token ", "digest ")
_URLSAFE = str.maketrans("+/", "-_")
# a line break where an API wraps a long value (raw, or JSON-escaped), with the next line's indent: between two
# characters of a token, so the breaks of pretty-printed JSON (after ``,`` ``{`` ``"``, before ``}``) are not
# joined and most multi-line text is scanned once. Each break comes first and looks back at the character before
# it, so a search jumps from break to break.
_TOKEN = r"[^\s\"',;{}\[\]()<>]"
_BREAKS = (r"\r\n", r"\r", r"\n", r"\\r\\n", r"\\n", r"\\r")
_WRAP = re.compile("(?:" + "|".join(rf"{b}(?<={_TOKEN}{b})" for b in _BREAKS) + rf")[ \t]*(?={_TOKEN})")


def secret_variants(secret: str) -> set[str]:
    """The forms ``secret`` takes in our outputs, as plain text to look for: raw, JSON-escaped, URL-encoded,
    HTML/XML-escaped; for a secret of MIN_PART_CHARS or more its hex and every-byte ``%XX`` forms (lower and
    upper case); for one of MIN_ENCODED_CHARS or more its base64 — standard and URL-safe, at each of the three
    alignments it can have inside a longer encoded text (a Basic header, a JWT, a logged blob). The scrubber
    matches more than these (``_patterns``)."""
    variants = _text_forms(secret) | _base64_forms(secret)
    for form in _byte_forms(secret):
        variants |= {form, form.upper()}
    return variants


def _text_forms(secret: str) -> set[str]:
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret),  # safe="" already
        html.escape(secret),  # quotes too
    }
    return {f for f in forms if f}


def _byte_forms(secret: str) -> set[str]:
    """Hex and every-byte ``%XX`` of the secret's UTF-8 bytes, in lower case (an API that echoes a token as a
    byte dump or fully percent-encoded). None for a short secret: its hex would match noise (digests)."""
    raw = secret.encode()
    if len(raw) < MIN_PART_CHARS:
        return set()
    hexed = raw.hex()
    return {hexed, "".join(f"%{hexed[i : i + 2]}" for i in range(0, len(hexed), 2))}


def _base64_forms(secret: str) -> set[str]:
    """The part of base64(secret) that does not depend on what precedes or follows it, at each alignment: the
    complete 4-character groups made of the secret's bytes only."""
    cores = {core for _, _, core, _, _ in _base64_parts(secret.encode())}
    return cores | {core.translate(_URLSAFE) for core in cores}


@lru_cache(maxsize=256)
def _base64_parts(raw: bytes) -> tuple[tuple[str, str, str, str, str], ...]:
    """At each alignment of ``raw`` in a base64 text: (the characters the leading partial group may show where it
    carries some of the secret's bits, that group's characters made of its bits only, the complete groups, the
    trailing partial group's characters made of its bits only, the characters its next one may show)."""
    if len(raw) < MIN_ENCODED_CHARS:
        return ()
    out = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        core = encoded[4 if shift else 0 : 4 * ((shift + len(raw)) // 3)]  # 12 characters at least
        lead_some = lead = ""
        if shift:  # the first group: ``shift`` bytes of what precedes, then the secret's first bytes
            first = raw[: 3 - shift]
            lead = base64.b64encode(b"\0" * shift + first).decode()[shift + 1 :]
            lead_some = "".join(
                sorted({base64.b64encode(bytes([b]) * shift + first).decode()[shift] for b in range(256)})
            )
        trail = trail_some = ""
        rest = (shift + len(raw)) % 3  # the secret's bytes in the last group, before what follows
        if rest:
            last = raw[len(raw) - rest :]
            trail = base64.b64encode(last + b"\0" * (3 - rest)).decode()[:rest]
            trail_some = "".join(
                sorted({base64.b64encode(last + bytes([b]) * (3 - rest)).decode()[rest] for b in range(256)})
            )
        out.append((lead_some, lead, core, trail, trail_some))
    return tuple(out)


Leads = dict[
    str, tuple[str, str]
]  # a base64 core's first 12 characters -> the leading partial group's (some, own)


def _patterns(secret: str) -> tuple[dict[str, int], Leads]:
    """Every form of ``secret`` the scrubber replaces, as a regex and the length of text it matches (longest
    first wins): the text forms (a number only as a whole number), hex and ``%XX`` in any letter case, and
    base64 in both alphabets with every character of the partial groups at its two ends that carries a bit of the
    secret (a group is 4 characters for 3 bytes: cutting at the complete groups left up to 3 characters of it).
    The leading group is looked for before a match (``Scrubber._spans``), so that every pattern still starts with
    its literal core: a character class first would be tried at nearly every position of every text."""
    out = {_form_pattern(form): len(form) for form in _text_forms(secret)}
    # each letter as a class, not as a case-insensitive group: that would be tried at every position of a text
    out.update({_any_case(form): len(form) for form in _byte_forms(secret)})
    leads: Leads = {}
    for parts in _base64_parts(secret.encode()):
        length = sum(map(len, parts[1:4])) + 2  # the partial characters at both ends
        for lead_some, lead, core, trail, trail_some in (parts, tuple(p.translate(_URLSAFE) for p in parts)):
            tail = f"(?:{re.escape(trail)}[{re.escape(trail_some)}])?" if trail_some else ""
            out[re.escape(core) + tail] = length
            if lead_some:
                leads[core[:MIN_ENCODED_CHARS]] = (lead_some, lead)
    return out, leads


def _any_case(form: str) -> str:
    """A hex or ``%XX`` form as a regex that matches it in any letter case."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c) for c in form)


def secret_parts(secret: str) -> set[str]:
    """The values a secret string carries that can show up on their own: each value of a ``name=value; …``
    (a Cookie header) or ``name=value&…`` string, the credentials after an auth scheme (``Bearer x``), and for
    ``Basic``, the decoded ``user:password`` and each half. Parts shorter than MIN_PART_CHARS are left out."""
    parts: set[str] = set()
    text = secret.strip()
    lowered = text.lower()
    for scheme in _SCHEMES:
        if lowered.startswith(scheme):
            rest = text[len(scheme) :].strip()
            parts.add(rest)
            if scheme == "basic ":
                with suppress(ValueError):  # not base64, or not UTF-8 (binascii.Error, UnicodeDecodeError)
                    decoded = base64.b64decode(rest, validate=True).decode()
                    parts |= {decoded, *decoded.split(":", 1)}
    if "=" in text:
        for pair in _PAIRS.split(text):
            name, sep, value = pair.strip().partition("=")
            if sep and name.strip() and value.strip():
                parts.add(value.strip().strip('"'))
    return {p for p in parts if len(p) >= MIN_PART_CHARS and p != secret}


def _form_pattern(form: str) -> str:
    """A variant as a regex: a number matches only as a whole number (``42`` never inside ``1423`` or ``4.2``)."""
    if _NUMBER.fullmatch(form):
        return rf"(?<![0-9])(?<![0-9]\.){re.escape(form)}(?![0-9])(?!\.[0-9])"
    return re.escape(form)


def _number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class SecretSet(set[str]):
    """The secret values one run knows, each registered with its parts (``secret_parts``). It only grows, and
    its size is its version: ``scrubber()`` rebuilds the run's scrubber only after something was added.

    Adding is safe from worker threads (each ``add`` is one set operation under the GIL)."""

    __slots__ = ("_built", "fields")

    def __init__(self, values: Iterable[str] = (), *, fields: Iterable[str] = ()) -> None:
        super().__init__()
        # max_chars -> (size and fields when built, scrubber)
        self._built: dict[int, tuple[tuple[int, tuple[str, ...]], Scrubber]] = {}
        # the sensitive fields every scrubber of the set redacts by key (``qlab.project.model.Config``)
        self.fields: tuple[str, ...] = tuple(fields)
        self.update(values)

    def add(self, value: str) -> None:
        if value and value not in self:
            super().add(value)
            for part in secret_parts(value):
                super().add(part)

    def update(self, *groups: Iterable[str]) -> None:
        for group in groups:
            for value in group:
                self.add(value)

    def scrubber(self, *, max_chars: int = 0, key_rules: bool = False) -> Scrubber:
        """The scrubber for every secret known now: by value only and never truncating unless asked (for
        logs, files and the console). Rebuilt only after something was added (a log line each costs nothing)."""
        if key_rules:
            return scrubber(frozenset(self), sensitive_fields=self.fields, max_chars=max_chars)
        built = self._built.get(max_chars)
        if built is None or built[0] != (len(self), self.fields):
            built = self._built[max_chars] = (
                (len(self), self.fields),
                scrubber(frozenset(self), sensitive_fields=self.fields, max_chars=max_chars, key_rules=False),
            )
        return built[1]

    def text(self, value: str) -> str:
        """``value`` with every known secret replaced (no truncation)."""
        return self.scrubber().text(value)


class Scrubber:
    """A compiled scrubber: build once per set of secrets, apply to many objects."""

    __slots__ = (
        "_hold",
        "_key_cache",
        "_key_texts",
        "_keys",
        "_leads",
        "_max_chars",
        "_numbers",
        "_pattern",
        "fields",
    )

    # ``key_rules=False`` leaves the secret-bearing keys alone (only ``sensitive_fields`` apply): the writers' last
    # pass over a whole artifact, whose own keys (``headers: ["Authorization"]``, ``tokens``) are not secrets

    def __init__(
        self,
        secrets: Iterable[str],
        *,
        sensitive_fields: Iterable[str] = (),
        max_chars: int = DEFAULT_MAX_CHARS,
        key_rules: bool = True,
        json_numbers: bool = True,
    ):
        patterns: dict[str, int] = {}
        self._leads: Leads = {}
        numbers: set[str] = set()
        for secret in secrets:
            if secret:
                forms, leads = _patterns(secret)
                patterns.update(forms)
                self._leads.update(leads)
                numbers |= {form for form in _text_forms(secret) if _NUMBER.fullmatch(form)}
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(patterns, key=lambda p: (-patterns[p], p))
        self._pattern = re.compile("|".join(ordered)) if ordered else None
        # a JSON number equal to a numeric secret is replaced as well (a sensitive userId: 42), unless asked not to
        # (a value that is only sensitive in text: the number would also be a rank, a count or a status code)
        self._numbers = frozenset(numbers) if json_numbers else frozenset()
        # Scrubber.stream holds back this many characters: a match starting before them is complete (the
        # longest form, plus the two characters a number's look-ahead reads)
        self._hold = (patterns[ordered[0]] + 2) if ordered else 0
        self.fields = tuple(sensitive_fields)
        fields = key_set(self.fields)
        self._keys = SECRET_KEYS | fields if key_rules else fields
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
            value = self._across_lines(self._redact(value))
        return truncate(value, self._max_chars)

    def _spans(self, text: str, pos: int = 0) -> Iterator[tuple[int, int]]:
        """Where the secrets are in ``text`` from ``pos`` on, in order: each match, begun earlier by the leading
        partial group of a base64 form when the characters before it are that group's."""
        assert self._pattern is not None
        done = pos
        for match in self._pattern.finditer(text, pos):
            start = match.start()
            lead = self._leads.get(match.group()[:MIN_ENCODED_CHARS]) if self._leads else None
            if lead is not None:
                some, own = lead
                begin = start - len(own) - 1
                if begin >= done and text[begin] in some and text[begin + 1 : start] == own:
                    start = begin
            yield start, match.end()
            done = match.end()

    def _redact(self, text: str) -> str:
        assert self._pattern is not None
        if not self._pattern.search(text):
            return text  # the common case, decided in C
        out: list[str] = []
        done = 0
        for start, end in self._spans(text):
            out += [text[done:start], REDACTED]
            done = end
        return "".join(out) + text[done:] if out else text

    def _across_lines(self, text: str) -> str:
        """``text`` with every secret a line break cuts in two (``_WRAP``: an API that wraps a long token, a
        base64 blob at 76 columns) replaced whole, the break with it."""
        assert self._pattern is not None
        if ("\n" not in text and "\r" not in text and "\\" not in text) or not _WRAP.search(text):
            return text
        joined = _WRAP.sub("", text)
        if not self._pattern.search(joined):
            return text  # the common cases, decided in C
        starts: list[tuple[int, int]] = []  # (start in the joined text, start in ``text``) of each piece
        position = length = 0
        for wrap in _WRAP.finditer(text):
            starts.append((length, position))
            length += wrap.start() - position
            position = wrap.end()
        starts.append((length, position))

        def original(at: int) -> int:
            piece = bisect_right(starts, (at, len(text))) - 1
            return starts[piece][1] + at - starts[piece][0]

        out: list[str] = []
        done = 0
        for start, end in self._spans(joined):
            out += [text[done : original(start)], REDACTED]
            done = original(end - 1) + 1
        return "".join(out) + text[done:]

    def stream(self, pieces: Iterable[str]) -> Iterator[str]:
        """The pieces of one text with every secret replaced, never truncated: a secret split between two
        pieces is still found. Pieces are gathered into blocks of about STREAM_BLOCK characters."""
        pattern = self._pattern
        if pattern is None:
            yield from pieces
            return
        buffer, start = "", 0  # buffer[:start] was emitted already (kept as look-behind context)
        for piece in pieces:
            buffer += piece
            if len(buffer) - start < STREAM_BLOCK + self._hold:
                continue
            text, end = self._block(buffer, start, len(buffer) - self._hold)
            yield self._across_lines(text)
            keep = end - 2  # end >= STREAM_BLOCK
            buffer, start = buffer[keep:], end - keep
        if len(buffer) > start:
            yield self._across_lines(self._block(buffer, start, len(buffer))[0])

    def _block(self, buffer: str, start: int, limit: int) -> tuple[str, int]:
        """``buffer[start:]`` scrubbed up to ``limit`` (or the end of a match that starts before it): the text
        and where it ends."""
        out: list[str] = []
        pos = start
        for begin, end in self._spans(buffer, start):
            if begin >= limit:
                break
            out += [buffer[pos:begin], REDACTED]
            pos = end
        end = max(limit, pos)
        out.append(buffer[pos:end])
        return "".join(out), end

    def _key_text(self, key: str) -> str:
        """``key`` with secrets replaced (only called when there are secrets)."""
        assert self._pattern is not None
        clean = self._key_texts.get(key)  # pragma: no mutate (a cache: a miss computes the same text)
        if clean is None:
            clean = self._key_texts[key] = self._redact(key)
        return clean

    def __call__(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is str:
            return self.text(obj)
        if kind in _SCALARS:
            if self._numbers and (kind is int or kind is float) and _number_text(obj) in self._numbers:
                return REDACTED
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
                    out[key] = value if not self._numbers else self(value)
                elif vkind is str:
                    out[key] = self.text(value)
                else:
                    out[key] = self(value)
            return out
        if kind is list or kind is tuple:
            return [self(item) for item in obj]
        if kind is SearchRow:
            return self._search_row(obj)
        if isinstance(obj, str):  # a str subclass (an Enum value): its text, as json.dumps writes it
            return self.text(str.__str__(obj))
        return obj

    def _search_row(self, row: SearchRow) -> SearchRow:
        """A search row with every text in it scrubbed by value: the tool id, the field names, the matched terms,
        the corrections. Its rank and scores stay numbers (what the engine computed; the scrub check still reads
        them); its mapping keys are field names and query words, never secret-bearing keys of a payload."""
        if self._pattern is None:
            return row
        text = self.text
        clean = SearchRow(
            tool_id=text(row.tool_id),
            rank=row.rank,
            score=row.score,
            field_scores={text(name): score for name, score in row.field_scores.items()},
            matched_terms=tuple(map(text, row.matched_terms)),
            corrections={text(wrong): text(right) for wrong, right in row.corrections.items()},
        )
        return row if clean == row else clean  # the row's evidence objects stay shared when nothing changed


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
def _cached(
    secrets: frozenset[str], fields: tuple[str, ...], max_chars: int, key_rules: bool, json_numbers: bool
) -> Scrubber:
    return Scrubber(
        secrets, sensitive_fields=fields, max_chars=max_chars, key_rules=key_rules, json_numbers=json_numbers
    )


def scrubber(
    secrets: Iterable[str],
    *,
    sensitive_fields: Iterable[str] = (),
    max_chars: int = DEFAULT_MAX_CHARS,
    key_rules: bool = True,
    json_numbers: bool = True,
) -> Scrubber:
    """A (cached) Scrubber for these secrets and fields."""
    fields = tuple(sorted(set(sensitive_fields)))
    return _cached(frozenset(s for s in secrets if s), fields, max_chars, key_rules, json_numbers)


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


SCAN_BLOCK = 1 << 20  # bytes read at a time: a large result artifact is scanned without being held whole


def find_leaks(paths: Iterable[Path], secrets: Iterable[str]) -> list[Leak]:
    """Scan each file for every secret (in every encoded form); one Leak per (file, secret) found.

    A directory is scanned recursively. A missing file is skipped (an artifact that was not written leaks
    nothing). Files are read in blocks that overlap by the longest form less one byte, so a secret split across
    two blocks is still found.
    """
    needles = [[v.encode() for v in secret_variants(secret)] for secret in secrets]  # "" has no forms
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


# ---------------------------------------------------------------------------------------- workflow commands

# Characters a culture-aware .NET comparison passes over (controls, format characters, variation selectors,
# other default-ignorable code points): GitHub's runner looks for ``::`` and ``##[`` with such comparisons, so to
# it ``#\u200b#[`` is ``##[``. Wider than .NET's own set on purpose: an extra character costs nothing here.
_SKIPPED = (
    "[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# the old form, obeyed wherever it stands in a line: ``##[name …]data``
_OLD_FORM = re.compile(f"(#{_SKIPPED}*#{_SKIPPED}*)\\[")
# the current form, obeyed at the start of a line (after white space): ``::name …::data``; a line ends at \n
# or \r, as the runner reads them
_LINE_FORM = re.compile(f"(?:^|(?<=\r))((?:\\s|{_SKIPPED})*:{_SKIPPED}*):", re.M)


def neutralize_commands(text: str) -> str:
    """``text`` with every workflow command GitHub's runner would obey made inert, visibly: a backslash goes
    before the ``[`` of ``##[`` (anywhere) and before the second ``:`` of a line's leading ``::`` (``:\\:error::``).
    Idempotent; text without ``#`` or ``:`` is returned as it is."""
    if "#" in text:
        text = _OLD_FORM.sub(r"\1\\[", text)
    if ":" in text:
        text = _LINE_FORM.sub(r"\1\\:", text)
    return text


def log_line(text: str, secrets: SecretSet | None = None) -> str:
    """A line for a log file (run.log, a dev server's log): every known secret replaced, every workflow command
    made inert (a CI step that prints the log must not obey what a server or a response wrote)."""
    return neutralize_commands(secrets.text(text) if secrets else text)


# ---------------------------------------------------------------------------------------------- the console

_WATCHED: list[SecretSet] = []  # the secret sets of this invocation's runs (see ``console``)


def watch_console(secrets: SecretSet) -> None:
    """Scrub everything the console shows from now on with ``secrets`` too (a command calls this with its
    run's set; it stays watched until the invocation ends, so an error printed last is scrubbed as well)."""
    if not any(s is secrets for s in _WATCHED):
        _WATCHED.append(secrets)


def console_text(text: str) -> str:
    """``text`` with every secret of every watched set replaced."""
    for secrets in _WATCHED:
        text = secrets.text(text)
    return text


class ScrubbedStream(io.TextIOBase):
    """A console stream whose text passes the scrubber of every watched secret set, a whole line at a time (a
    line ends at ``\n``, or at ``\r`` for a progress line that redraws itself), so a secret written in two
    pieces is still found; every workflow command in it is made inert (``neutralize_commands``), except the
    lines qlab writes as its own commands (``command``)."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner
        self._pending = ""
        self._line = ""  # the current line as far as it was written: the context of the next piece

    def write(self, text: str) -> int:
        self._pending += text
        cut = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
        if cut >= 0:
            done, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
            self._emit(done)
        return len(text)

    def _emit(self, text: str) -> None:
        # made inert together with what the line already holds (a ``#`` flushed before its ``#[``); what was
        # written is inert already, so every insertion falls in the new text
        clean = neutralize_commands(self._line + console_text(text))[len(self._line) :]
        end = max(clean.rfind("\n"), clean.rfind("\r"))
        self._line = self._line + clean if end < 0 else clean[end + 1 :]
        self.inner.write(clean)

    def command(self, line: str) -> None:
        """Write one of qlab's own workflow commands (an annotation, a stop-commands marker) as a line of its
        own: secrets are scrubbed and ``##[`` made inert as everywhere, its leading ``::`` is kept."""
        if self._pending or self._line:
            self.write("\n")
        self.inner.write(_OLD_FORM.sub(r"\1\\[", console_text(line)) + "\n")

    def flush(self) -> None:
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
        self.inner.flush()

    def isatty(self) -> bool:
        return bool(self.inner.isatty())

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.inner, "encoding", "utf-8") or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)

    def writable(self) -> bool:
        return True


def workflow_command(line: str) -> None:
    """Print ``line``, one of qlab's own workflow commands (``qlab.report.github.command``), on stdout: the one
    kind of line whose leading ``::`` the console leaves alone."""
    stream = sys.stdout
    if isinstance(stream, ScrubbedStream):
        stream.command(line)
    else:  # no console installed (qlab used as a library): nothing is made inert anywhere
        stream.write(line + "\n")


@contextmanager
def console() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` write through ``ScrubbedStream``; afterwards they
    are flushed and put back, and the watched sets are forgotten. ``qlab.cli.main`` wraps every command in it."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(streams[0]), ScrubbedStream(streams[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = streams
        _WATCHED.clear()

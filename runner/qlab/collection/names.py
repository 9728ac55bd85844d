"""Names: derived tool ids, name normalization, tokens, singular nouns and JSONPath/JSON-pointer rendering.

Every function here is pure and deterministic: the same input gives the same output on every run and every
machine, which is what makes derived ids stable and the collection artifact byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SEPARATORS = re.compile(r"[\s_\-.]+")
_NON_SLUG = re.compile(r"[^A-Za-z0-9]+")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@lru_cache(maxsize=65536)
def normalize(name: str) -> str:
    """``deliveryId``, ``delivery_id``, ``Delivery-ID`` → ``deliveryid``: case and separators do not count."""
    return _SEPARATORS.sub("", name).lower()


@lru_cache(maxsize=65536)
def tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a camelCase, snake_case, kebab-case or dotted name: ``getMemberNo`` → get, member, no."""
    return tuple(t.lower() for t in _CAMEL.findall(name))


def derived_id(method: str, path: str) -> str:
    """The id of an operation without an operationId: ``get /members/{memberNo}`` → ``get_members_memberNo``.

    Only the method and the path template go in, so the id never changes between runs.
    """
    slug = _NON_SLUG.sub("_", path).strip("_")
    return f"{method.lower()}_{slug}" if slug else f"{method.lower()}_root"


def unique(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3``, … : the first that is not in ``taken`` (which it joins)."""
    candidate, n = wanted, 2
    while candidate in taken:
        candidate, n = f"{wanted}_{n}", n + 1
    taken.add(candidate)
    return candidate


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """A rough English singular for nouns found in paths and schema names: deliveries → delivery, pets → pet."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "uses", "xes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def schema_noun(ref: str) -> str:
    """The entity name in a schema reference: ``#/definitions/io.k8s.api.core.v1.Pod`` → ``Pod``."""
    tail = ref.rsplit("/", 1)[-1]
    return tail.rsplit(".", 1)[-1]


def static_segments(path: str) -> list[str]:
    """Path segments that are not templates: ``/members/{memberNo}/deliveries`` → members, deliveries."""
    return [s for s in path.split("/") if s and not s.startswith("{")]


def segment_before(path: str, parameter: str) -> str | None:
    """The static segment right before ``{parameter}`` in ``path`` (``/albums/{id}`` → ``albums``), if any."""
    parts = [s for s in path.split("/") if s]
    marker = "{" + parameter + "}"
    for i, part in enumerate(parts):
        if part == marker:
            for prev in reversed(parts[:i]):
                if not prev.startswith("{"):
                    return prev
            return None
    return None


def json_path(parts: Iterable[str | int]) -> str:
    """``("paths", "/pets", "get")`` → ``$.paths['/pets'].get``: how error messages name a place in a document."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part == "[*]":
            out.append("[*]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"['{escaped}']")
    return "".join(out)


def pointer_parts(pointer: str) -> list[str]:
    """The unescaped segments of a JSON pointer (``/a~1b/c`` → ``a/b``, ``c``)."""
    if not pointer:
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]


def pointer(parts: Sequence[str | int]) -> str:
    """The JSON pointer of ``parts``; the inverse of ``pointer_parts``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)

"""``${VAR}`` and ``${VAR:-default}`` in the string values of qlab.yaml, for values that differ per machine.

- ``${VAR}``: the variable's value; unset is a located error.
- ``${VAR:-default}``: the default when VAR is unset or empty; the default may itself hold ``${...}``, up to
  ``MAX_NESTING`` levels deep (deeper is a located error, not a RecursionError).
- ``$${`` writes a literal ``${`` (``$${captures.orderId}`` -> ``${captures.orderId}``).

Only values are interpolated, never keys, and the result is always a string (``port: ${PORT}`` gives
``"8080"``): the schema then decides whether that is acceptable, as it would for any other value.

:func:`literal` writes outside text (a spec's words in a generated qlab.yaml) so that interpolation gives it
back unchanged: it can never read a variable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from qlab.contracts.errors import Diagnostic
from qlab.project.document import Document, JsonPath

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_NESTING = 20


_REFERENCE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)")


def names(text: str) -> list[str]:
    """The variables ``text`` reads (``${VAR}``, ``${VAR:-default}``, also inside a default), once each, in order;
    a literal ``$${`` reads none."""
    return list(dict.fromkeys(_REFERENCE.findall(text)))


class InterpolationError(ValueError):
    """A bad or unresolvable ``${...}``; the message says which and what to do."""


def _closing(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``${`` whose body starts at ``start``, counting nested ``${``."""
    depth = 1
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def expand(text: str, environ: Mapping[str, str], *, strict: bool = True, _depth: int = 0) -> str:
    """Interpolate one string. With ``strict=False`` an unset variable is left as written instead of raising
    (and a default nested too deep is left as written)."""
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$${", i):
            out.append("${")
            i += 3
            continue
        if not text.startswith("${", i):
            out.append(text[i])
            i += 1
            continue
        end = _closing(text, i + 2)
        if end < 0:
            if not strict:
                out.append(text[i:])
                break
            raise InterpolationError(
                f"'${{' at character {i + 1} has no closing '}}' (write $${{ for a literal ${{)"
            )
        body = text[i + 2 : end]
        name, sep, default = body.partition(":-")
        if not _NAME.match(name):
            if not strict:
                out.append(text[i : end + 1])
                i = end + 1
                continue
            raise InterpolationError(
                f"'${{{body}}}': {name!r} is not a variable name (letters, digits and _); "
                "write ${VAR} or ${VAR:-default}"
            )
        value = environ.get(name)
        if sep and not value:
            if _depth >= MAX_NESTING:
                if not strict:
                    out.append(text[i : end + 1])
                    i = end + 1
                    continue
                raise InterpolationError(
                    f"'${{{name}:-…}}' nests defaults more than {MAX_NESTING} levels deep; set {name} or flatten "
                    "the defaults"
                )
            out.append(expand(default, environ, strict=strict, _depth=_depth + 1))
        elif value is not None:
            out.append(value)
        elif strict:
            raise InterpolationError(
                f"${{{name}}} is not set and has no default: set {name} or write ${{{name}:-default}}"
            )
        else:
            out.append(text[i : end + 1])
        i = end + 1
    return "".join(out)


def literal(text: str) -> str:
    """``text`` as a qlab.yaml value that :func:`expand` turns back into ``text`` whatever it holds: every
    ``${`` is written ``$${``."""
    return text.replace("${", "$${")


def interpolate(document: Document, environ: Mapping[str, str]) -> tuple[Any, list[Diagnostic]]:
    """A copy of ``document.data`` with every string value interpolated, and a located error per bad value."""
    errors: list[Diagnostic] = []

    def walk(value: Any, path: JsonPath) -> Any:
        if isinstance(value, str):
            try:
                return expand(value, environ)
            except InterpolationError as exc:
                errors.append(document.diagnostic(path, str(exc)))
                return value
        if isinstance(value, dict):
            return {key: walk(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, (*path, index)) for index, item in enumerate(value)]
        return value

    return walk(document.data, ()), errors

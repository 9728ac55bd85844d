"""Render a draft-07 JSON Schema as a Markdown reference: one table per object, one section per definition.

The reference is derived, never written by hand, so it cannot drift from the schema qlab validates with. The
renderer understands what qlab's schemas use: ``properties`` / ``required``, maps (``additionalProperties``
with ``propertyNames``), ``$ref`` to ``#/definitions/*``, ``enum`` / ``const``, ``oneOf`` / ``anyOf``
alternatives with ``title``, type lists, bounds, ``pattern``, ``default`` and ``examples``. Every definition
gets an explicit anchor ``def-<name>`` so links survive heading changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

Schema = Mapping[str, Any]
MAX_INLINE_ENUM = 12  # longer value lists get their own bullet list under the table


def anchor(name: str) -> str:
    return "def-" + name.replace("_", "-").lower()


def cell(text: str) -> str:
    """Make text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def ref_name(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        return ref.rsplit("/", 1)[1]
    return None


def type_of(schema: Schema) -> str:
    """A short, human type: a link for a ``$ref``, the alternatives of a ``oneOf``, ``list of …``, ``map …``."""
    name = ref_name(schema)
    if name is not None:
        return f"[{name}](#{anchor(name)})"
    if "const" in schema:
        return f"constant {code(schema['const'])}"
    if "enum" in schema:
        values = schema["enum"]
        if len(values) <= MAX_INLINE_ENUM:
            return "one of " + ", ".join(code(v) for v in values)
        return f"one of {len(values)} values (listed below)"
    for key in ("oneOf", "anyOf"):
        alternatives = [alt for alt in schema.get(key, []) if isinstance(alt, Mapping)]
        # a oneOf made only of `required` lists is a constraint, not a type; the type is the node's own
        if alternatives and not all(set(alt) <= {"required"} for alt in alternatives):
            return " or ".join(_alternative(alt) for alt in alternatives)
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if not kinds:
        return "any value"
    return " or ".join(_one_type(kind, schema) for kind in kinds)


def _alternative(alt: Schema) -> str:
    title = alt.get("title")
    described = type_of({k: v for k, v in alt.items() if k != "title"})
    return (
        f"{described} ({title})"
        if title and not described.endswith(")") and ref_name(alt) is None
        else described
    )


def _one_type(kind: str, schema: Schema) -> str:
    if kind == "array":
        items = schema.get("items")
        return f"list of {type_of(items)}" if isinstance(items, Mapping) else "list"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping) and not schema.get("properties"):
            keys = (schema.get("propertyNames") or {}).get("title", "name")
            return f"map of {keys} → {type_of(values)}"
        return "object"
    return {
        "string": "string",
        "integer": "integer",
        "number": "number",
        "boolean": "boolean",
        "null": "null",
    }.get(kind, kind)


def constraints(schema: Schema) -> list[str]:
    """Bounds, pattern, default and examples, as short phrases."""
    out: list[str] = []
    words = {
        "minimum": "≥",
        "exclusiveMinimum": ">",
        "maximum": "≤",
        "exclusiveMaximum": "<",
        "minLength": "length ≥",
        "maxLength": "length ≤",
        "minItems": "items ≥",
        "maxItems": "items ≤",
        "minProperties": "entries ≥",
    }
    for key, word in words.items():
        if key in schema and not (key == "minLength" and schema[key] == 1):
            out.append(f"{word} {schema[key]}")
    if schema.get("uniqueItems"):
        out.append("unique items")
    if "pattern" in schema:
        out.append(f"matches {code(schema['pattern'])}")
    if "default" in schema:
        out.append(f"default {code(schema['default'])}")
    if schema.get("examples"):
        out.append("e.g. " + ", ".join(code(e) for e in schema["examples"]))
    return out


def enum_values(schema: Schema) -> list[Any]:
    """The enum of the node, or of its ``oneOf`` alternative that has one."""
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    for alt in schema.get("oneOf", []) or []:
        if isinstance(alt, Mapping) and isinstance(alt.get("enum"), list):
            return list(alt["enum"])
    return []


def enum_meanings(description: str, values: list[Any]) -> tuple[str, dict[str, str]]:
    """Split ``"Intro. a: what a is; b: what b is"`` into the intro and ``{value: meaning}``.

    qlab's schemas describe enum values inline this way; a table reads better. Returns no meanings when fewer
    than half of the values are described (then the description is shown as written).
    """
    names = [v for v in values if isinstance(v, str)]
    found: list[tuple[int, int, str]] = []  # (start, end of "name: ", name)
    for name in names:
        # a whole word: "pass_rate: " must not match inside "assertion_pass_rate: "
        match = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}: ", description)
        if match:
            found.append((match.start(), match.end(), name))
    found.sort()
    if not names or len(found) * 2 < len(names):
        return description, {}
    intro = description[: found[0][0]].strip()
    meanings: dict[str, str] = {}
    for i, (_, text_start, name) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(description)
        meanings[name] = description[text_start:end].strip().rstrip(";").rstrip(".").strip()
    return intro, meanings


def meaning_table(meanings: Mapping[str, str], *, header: str = "value") -> list[str]:
    lines = [f"| {header} | meaning |", "|---|---|"]
    lines += [f"| {code(name)} | {cell(text)} |" for name, text in meanings.items()]
    return lines


def long_enums(schema: Schema) -> list[Any]:
    values = schema.get("enum")
    return list(values) if isinstance(values, list) and len(values) > MAX_INLINE_ENUM else []


def property_table(schema: Schema) -> list[str]:
    """The table of an object's properties (``required`` first-class), then any long value lists."""
    props: Mapping[str, Schema] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    lines = ["| key | type | required | description |", "|---|---|---|---|"]
    extras: list[str] = []
    for key, sub in props.items():
        if key == "$schema":
            continue
        description = sub.get("description") or _definition_hint(sub)
        intro, meanings = enum_meanings(description, enum_values(sub))
        if len(meanings) >= 3:  # a value table below reads better than one long cell
            description = (intro + " " if intro else "") + "See the values below."
            extras += ["", f"Values of {code(key)}:", "", *meaning_table(meanings)]
        details = constraints(sub)
        text = description + (f" ({'; '.join(details)})" if details else "")
        lines.append(
            f"| {code(key)} | {cell(type_of(sub))} | {'yes' if key in required else ''} | {cell(text)} |"
        )
        values = long_enums(sub)
        if values:
            extras.append(f"Values of {code(key)}: " + ", ".join(code(v) for v in values) + ".")
    for rule in _one_of_required(schema):
        extras.append(rule)
    return lines + (["", *extras] if extras and extras[0] != "" else extras)


def _definition_hint(schema: Schema) -> str:
    name = ref_name(schema)
    return f"See [{name}](#{anchor(name)})." if name else ""


def _one_of_required(schema: Schema) -> list[str]:
    groups = [
        alt.get("required")
        for alt in schema.get("oneOf", [])
        if isinstance(alt, Mapping) and set(alt) == {"required"}
    ]
    if not groups:
        return []
    options = " | ".join(" + ".join(code(k) for k in group) for group in groups if group)
    return [f"Exactly one of: {options}."]


def definition_section(name: str, schema: Schema, *, level: int = 3, use_title: bool = True) -> Iterator[str]:
    """The section of one definition (or, with ``use_title=False``, of an inline object at path ``name``)."""
    title = schema.get("title")
    yield f'<a id="{anchor(name)}"></a>'
    yield ""
    yield f"{'#' * level} {title if use_title and title else name}"
    yield ""
    if title and not use_title:
        yield f"Form: {title}."
        yield ""
    description = str(schema.get("description") or "")
    intro, meanings = enum_meanings(description, enum_values(schema))
    if (intro or not meanings) and description:
        yield intro if meanings else description
        yield ""
    if meanings:
        yield from meaning_table(meanings)
        yield ""
    yield f"Type: {type_of(schema)}."
    details = constraints(schema)
    if details:
        yield f"Constraints: {'; '.join(details)}."
    yield ""
    if schema.get("properties"):
        yield from property_table(schema)
        yield ""
    values = long_enums(schema)
    if values and not meanings:
        yield "Values: " + ", ".join(code(v) for v in values) + "."
        yield ""
    for alt in schema.get("oneOf", []) or []:
        names = (alt.get("propertyNames") or {}).get("enum") if isinstance(alt, Mapping) else None
        if names:
            yield (
                f"Keys of {alt.get('title') or 'the mapping form'}: "
                + ", ".join(code(v) for v in names)
                + "."
            )
            yield ""


def nested_objects(path: str, schema: Schema) -> Iterator[tuple[str, Schema]]:
    """Inline object schemas under ``schema`` that deserve their own section (not definitions, not maps)."""
    for key, sub in (schema.get("properties") or {}).items():
        for candidate in [sub, *(sub.get("oneOf") or []), *(sub.get("anyOf") or [])]:
            if isinstance(candidate, Mapping) and candidate.get("properties") and ref_name(candidate) is None:
                child = f"{path}.{key}"
                yield child, candidate
                yield from nested_objects(child, candidate)


def render(schema: Schema, *, top_title: str, definitions_title: str = "Definitions") -> str:
    """The whole reference: the top-level object, its inline sub-objects, then every definition."""
    lines: list[str] = [f"## {top_title}", ""]
    if schema.get("description"):
        lines += [schema["description"], ""]
    if schema.get("properties"):
        lines += property_table(schema)
        lines.append("")
    elif schema.get("oneOf") or schema.get("type"):
        lines += [f"Type: {type_of(schema)}.", ""]
    for path, sub in nested_objects("", schema):
        lines += list(definition_section(path.lstrip("."), sub, use_title=False))
    definitions: Mapping[str, Schema] = schema.get("definitions") or {}
    if definitions:
        lines += [f"## {definitions_title}", ""]
        for name, sub in definitions.items():
            lines += list(definition_section(name, sub))
            for path, nested in nested_objects(name, sub):
                lines += list(definition_section(path, nested, level=4, use_title=False))
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"

"""jsonschema, behind one module: validate plain data against qlab's JSON Schemas (draft-07).

Errors come back as :class:`SchemaIssue` objects that carry what ``messages`` needs to word them (keyword,
absolute JSON path, instance, the failing subschema, and for ``oneOf``/``anyOf`` the resolved branches with the
issues of each), so no other module sees jsonschema's classes. Validators are built once per schema.

Valid documents are the common case: each one first meets a check compiled from the schema
(``qlab.project.quickcheck``), and only a document it does not find plainly valid goes to jsonschema, which
words the issues. jsonschema is imported then (with ``referencing`` and ``attrs``), so a run whose files are
valid never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from qlab.contracts.resources import load_schema
from qlab.project.document import JsonPath
from qlab.project.quickcheck import Check, compile_schema

if TYPE_CHECKING:
    from jsonschema import Draft7Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One schema violation, independent of jsonschema's classes."""

    keyword: str  # required, enum, type, additionalProperties, oneOf, ...
    path: JsonPath  # absolute path of the offending value (for a key error: of the key)
    instance: Any
    keyword_value: Any  # the keyword's value in the schema (the enum list, the minimum, ...)
    schema: Mapping[str, Any]  # the subschema holding the keyword
    text: str  # jsonschema's own message, the last resort of the wording
    is_key: bool = False  # the issue is about a mapping key (propertyNames)
    branches: tuple[Mapping[str, Any], ...] = ()  # oneOf / anyOf: each branch, $ref resolved
    branch_issues: tuple[tuple[SchemaIssue, ...], ...] = ()  # oneOf / anyOf: the issues of each branch


def _resolve(root: Mapping[str, Any], schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow a local ``$ref`` (``#/definitions/x``), keeping the referring schema's title if it has one."""
    seen = 0
    while "$ref" in schema and seen < 20:
        ref = str(schema["$ref"])
        title = schema.get("title")
        if not ref.startswith("#/"):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        schema = dict(target, title=title) if title else target
        seen += 1
    return schema


def _convert(error: ValidationError, root: Mapping[str, Any], prefix: JsonPath) -> SchemaIssue:
    path: JsonPath = (*prefix, *error.absolute_path)
    is_key = "propertyNames" in error.relative_schema_path or "propertyNames" in error.absolute_schema_path
    if is_key:
        path = (*path, str(error.instance))
    branches: tuple[Mapping[str, Any], ...] = ()
    branch_issues: tuple[tuple[SchemaIssue, ...], ...] = ()
    if error.validator in ("oneOf", "anyOf") and isinstance(error.validator_value, list):
        branches = tuple(_resolve(root, b) for b in error.validator_value)
        grouped: list[list[SchemaIssue]] = [[] for _ in branches]
        for sub in error.context or ():
            index = sub.relative_schema_path[0] if sub.relative_schema_path else None
            if isinstance(index, int) and 0 <= index < len(grouped):
                grouped[index].append(_convert(sub, root, prefix))
        branch_issues = tuple(tuple(group) for group in grouped)
    return SchemaIssue(
        keyword=str(error.validator),
        path=path,
        instance=error.instance,
        keyword_value=error.validator_value,
        schema=error.schema if isinstance(error.schema, Mapping) else {},
        text=error.message,
        is_key=is_key,
        branches=branches,
        branch_issues=branch_issues,
    )


def _local(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a definition of ``root``) with the root's definitions beside it, so its local ``$ref``s
    resolve."""
    return {**schema, "definitions": root.get("definitions", {})}


def _draft7() -> type[Draft7Validator]:
    from jsonschema import Draft7Validator

    return Draft7Validator


@lru_cache(maxsize=32)
def _validator(name: str, definition: str | None) -> tuple[Draft7Validator, Mapping[str, Any]]:
    root = load_schema(name)
    if definition is not None and definition not in root.get("definitions", {}):
        raise KeyError(f"schema {name!r} has no definition {definition!r}")
    schema = root if definition is None else _local(root["definitions"][definition], root)
    return _draft7()(schema), root


@lru_cache(maxsize=32)
def _quick(name: str, definition: str | None) -> Check:
    root = load_schema(name)
    return compile_schema(root if definition is None else root["definitions"][definition], root)


def validate(
    data: Any, schema: str, *, definition: str | None = None, prefix: JsonPath = ()
) -> list[SchemaIssue]:
    """Every violation of ``data`` against schema ``schema`` (``config``, ``case``, ...), or against one of its
    ``definitions`` (``case``, ``golden_cases``, ...). ``prefix`` is prepended to the reported paths, for data
    that sits inside a larger document (the third case of a list)."""
    if _quick(schema, definition)(data) is True:
        return []
    return jsonschema_issues(data, schema, definition=definition, prefix=prefix)


def jsonschema_issues(
    data: Any, schema: str, *, definition: str | None = None, prefix: JsonPath = ()
) -> list[SchemaIssue]:
    """``validate`` without the quick check: what jsonschema itself finds (the reference the tests hold the
    quick check to)."""
    validator, root = _validator(schema, definition)
    return [_convert(error, root, prefix) for error in validator.iter_errors(data)]


@lru_cache(maxsize=1)
def _case_parts() -> tuple[Draft7Validator, dict[str, Draft7Validator]]:
    """The case schema without its assertions, and one validator per assertion type."""
    root = load_schema("case")
    case = _local(root["definitions"]["case"], root)
    case["properties"] = {
        **case["properties"],
        "assertions": {**case["properties"]["assertions"], "items": {}},
    }
    branches = [_resolve(root, ref) for ref in root["definitions"]["assertion"]["oneOf"]]
    draft7 = _draft7()
    return draft7(case), {b["properties"]["type"]["const"]: draft7(_local(b, root)) for b in branches}


@lru_cache(maxsize=1)
def _quick_case() -> Check:
    """``quickcheck`` of the case schema, the assertions dispatched on ``type`` as below."""
    root = load_schema("case")
    case = dict(root["definitions"]["case"])
    case["properties"] = {
        **case["properties"],
        "assertions": {**case["properties"]["assertions"], "items": {}},
    }
    whole = compile_schema(case, root)
    branches = [_resolve(root, ref) for ref in root["definitions"]["assertion"]["oneOf"]]
    by_type = {b["properties"]["type"]["const"]: compile_schema(b, root) for b in branches}

    def check(data: Any) -> bool | None:
        verdict = whole(data)
        if verdict is not True:
            return verdict
        for item in data.get("assertions", ()):
            kind = item.get("type") if isinstance(item, dict) else None
            branch = by_type.get(kind) if isinstance(kind, str) else None
            if branch is None or branch(item) is not True:
                return None
        return True

    return check


def validate_case(data: Any, *, prefix: JsonPath = ()) -> list[SchemaIssue]:
    """The same issues as ``validate(data, "case", definition="case")``: a case that ``quickcheck`` finds plainly
    valid has none (most cases); otherwise the assertions union is dispatched on ``type`` here (one branch checked
    instead of all of them); an unknown or missing type goes through the full union so it is worded as one
    "unknown assertion type" issue."""
    if _quick_case()(data) is True:
        return []
    root = load_schema("case")
    case_validator, by_type = _case_parts()
    issues = [_convert(error, root, prefix) for error in case_validator.iter_errors(data)]
    assertions = data.get("assertions") if isinstance(data, dict) else None
    for index, item in enumerate(assertions if isinstance(assertions, list) else ()):
        at: JsonPath = (*prefix, "assertions", index)
        kind = item.get("type") if isinstance(item, dict) else None
        branch = by_type.get(kind) if isinstance(kind, str) else None
        if branch is not None:
            issues.extend(_convert(error, root, at) for error in branch.iter_errors(item))
        else:
            issues.extend(validate(item, "case", definition="assertion", prefix=at))
    return issues

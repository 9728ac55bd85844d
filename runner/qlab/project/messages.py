"""Schema issues -> located, human messages, worded per JSON Schema keyword.

Every message ends up as ``file:line:col: $.json.path: message`` (``Diagnostic.render``). The wording says
what is wrong *and* what is expected, with "Did you mean ...?" for misspelt keys and enum values
(``qlab.adapters.fuzzy``).
``oneOf`` never becomes a dump of every branch's errors: a discriminated union (assertions, keyed on ``type``)
reports the chosen branch's errors or one "unknown type" error; branches that only differ by their required
keys say which keys; otherwise the branch whose type matches the value is explained.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts.errors import Diagnostic
from qlab.project.document import Document, JsonPath
from qlab.project.schemas import SchemaIssue

Finding = tuple[JsonPath, str, bool]  # (path, message, point at the key rather than the value)

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_LIST_LIMIT = 12  # list the allowed values when there are at most this many


def quote(value: Any) -> str:
    """A value as the user would recognise it: strings in single quotes, others as JSON."""
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def describe(value: Any) -> str:
    """``'abc'`` -> ``a string ('abc')``; ``None`` -> ``null (an empty value)``."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value:g})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "unknown"


def _types_match(declared: Any, value: Any) -> bool:
    kinds = declared if isinstance(declared, list) else [declared]
    actual = json_type(value)
    return actual in kinds or (actual == "integer" and "number" in kinds)


def _alternatives(words: Sequence[str], joiner: str = "or") -> str:
    """``a, b or c``; ``'tool', or 'method' and 'path'`` when an alternative is itself a conjunction."""
    if len(words) <= 1:
        return "".join(words)
    comma = "," if any(" and " in w for w in words) else ""
    return f"{', '.join(words[:-1])}{comma} {joiner} {words[-1]}"


def suggestion(word: str, choices: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` (case-insensitive exact matches first) or an empty string."""
    options = [c for c in choices if isinstance(c, str)]
    for choice in options:
        if choice.lower() == word.lower() and choice != word:
            return f" Did you mean {choice!r}?"
    return did_you_mean(word, options)


def _enum(issue: SchemaIssue) -> Finding:
    choices = list(issue.keyword_value)
    title = issue.schema.get("title")
    value = issue.instance
    hint = suggestion(value, choices) if isinstance(value, str) else ""
    listed = ", ".join(quote(c) for c in choices)
    if issue.is_key:
        noun = title or "key"
        message = f"unknown {noun} {quote(value)}.{hint}"
    elif title:
        message = f"{quote(value)} is not a known {title}.{hint}"
    else:
        message = f"{quote(value)} is not one of {listed}.{hint}"
        return issue.path, message, False
    if not hint and len(choices) <= _LIST_LIMIT:
        message += f" Known: {listed}."
    return issue.path, message, issue.is_key


def _pattern(issue: SchemaIssue) -> Finding:
    schema = issue.schema
    title = schema.get("title")
    if issue.is_key:
        noun = title or "key"
        return (
            issue.path,
            f"{quote(issue.instance)} is not a valid {noun}: use letters, digits, '_', '.' and '-'",
            True,
        )
    message = f"{quote(issue.instance)} is not in the expected format"
    description = str(schema.get("description", "")).rstrip(".")
    examples = schema.get("examples") or []
    if description:
        message += f": {description[0].lower()}{description[1:]}"
    if examples and quote(examples[0]).strip("'") not in description:
        message += f" (e.g. {quote(examples[0])})"
    return issue.path, message, False


def _additional(issue: SchemaIssue) -> list[Finding]:
    allowed = list(issue.schema.get("properties", {}))
    out = []
    for key in issue.instance:
        if key in allowed:
            continue
        hint = suggestion(key, allowed)
        message = f"unknown key {quote(key)}.{hint}" if hint else f"unknown key {quote(key)}."
        if not hint and allowed:
            message += f" Allowed keys: {', '.join(allowed)}."
        out.append(((*issue.path, key), message, True))
    return out


def _required_only(branches: Sequence[Mapping[str, Any]]) -> list[list[str]] | None:
    """The required keys of each branch, when the branches differ only by them (``{required: [...]}``)."""
    out = []
    for branch in branches:
        if set(branch) - {"required", "title", "description"} or not branch.get("required"):
            return None
        out.append([str(k) for k in branch["required"]])
    return out


def _combo(issue: SchemaIssue) -> list[Finding]:
    """oneOf / anyOf, without a dump of every branch."""
    value, path = issue.instance, issue.path
    branches = issue.branches
    # 1. a union discriminated on ``type`` (assertions)
    consts = [b.get("properties", {}).get("type", {}).get("const") for b in branches]
    if branches and all(isinstance(c, str) for c in consts):
        noun = str(issue.schema.get("title", "item"))
        if not isinstance(value, dict):
            return [
                (path, f"expected {_article(noun)} (a mapping with a `type`), got {describe(value)}", False)
            ]
        kind = value.get("type")
        if "type" not in value:
            return [(path, f"missing required key 'type' (the {noun} type)", True)]
        if kind in consts:
            return explain_all(issue.branch_issues[consts.index(kind)])
        if not isinstance(kind, str):
            return [((*path, "type"), f"expected a string, got {describe(kind)}", False)]
        hint = suggestion(kind, [str(c) for c in consts])
        known = "" if hint else f" Known: {', '.join(str(c) for c in consts)}."
        return [((*path, "type"), f"unknown {noun} type {quote(kind)}.{hint}{known}", False)]
    # 2. branches that differ only by their required keys (exactly one of openapi/swagger/mcp/python)
    required = _required_only(branches)
    if required is not None and isinstance(value, dict):
        words = [" and ".join(quote(k) for k in keys) for keys in required]
        present = [keys for keys in required if all(k in value for k in keys)]
        if issue.keyword == "oneOf" and len(present) > 1:
            found = _alternatives([quote(k) for keys in present for k in keys], "and")
            return [(path, f"takes only one of {_alternatives(words)}; found {found}", False)]
        partial = [keys for keys in required if any(k in value for k in keys)]
        if len(partial) == 1:
            with_keys = ", ".join(quote(k) for k in partial[0] if k in value)
            return [(path, f"missing required key {quote(k)} (it goes with {with_keys})", True)
                    for k in partial[0] if k not in value]  # fmt: skip
        return [(path, f"needs {_alternatives(words)}", True)]
    # 3. a name that needs an argument, written bare (``- schema_coverage_below``)
    if isinstance(value, str):
        for branch in branches:
            names = branch.get("propertyNames", {}).get("enum", [])
            if value in names:
                return [(path, f"{quote(value)} takes a value: write `{value}: <number>`", False)]
    # 4. the branch whose declared type fits the value explains the problem
    fitting = [i for i, b in enumerate(branches) if "type" in b and _types_match(b["type"], value)]
    untyped = [i for i, b in enumerate(branches) if "type" not in b]
    if len(fitting) == 1 and not untyped:
        return explain_all(issue.branch_issues[fitting[0]])
    if not fitting and not untyped and branches:
        titles = [_form(b) for b in branches]
        return [(path, f"expected {_alternatives(titles)}, got {describe(value)}", False)]
    if fitting:  # several forms fit the type: explain the one with the fewest problems
        best = min(fitting + untyped, key=lambda i: len(issue.branch_issues[i]))
        if issue.branch_issues[best]:
            return explain_all(issue.branch_issues[best])
    return [(path, "matches more than one allowed form" if issue.keyword == "oneOf" else issue.text, False)]


def _article(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _form(branch: Mapping[str, Any]) -> str:
    """How a oneOf branch is named in "expected X or Y": its title (with an article), else its type."""
    title = branch.get("title")
    if not title:
        return _TYPE_WORDS.get(str(branch.get("type")), "another form")
    title = str(title)
    return title if title.startswith(("a ", "an ")) else _article(title)


def _bound(value: Any) -> str:
    """A schema bound as written: ``604800`` and ``1000000000000``, not ``1e+12``; ``0.5`` as is."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e16):
        return str(int(value))
    return f"{value:g}"


def _bounds(issue: SchemaIssue) -> Finding:
    words = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "greater than",
        "exclusiveMaximum": "less than",
    }
    return (
        issue.path,
        f"must be {words[issue.keyword]} {_bound(issue.keyword_value)}, got {quote(issue.instance)}",
        False,
    )


def explain(issue: SchemaIssue) -> list[Finding]:
    """The findings for one issue (an ``additionalProperties`` issue gives one per unknown key)."""
    key, value, path = issue.keyword, issue.instance, issue.path
    if key == "type":
        declared = issue.keyword_value if isinstance(issue.keyword_value, list) else [issue.keyword_value]
        want = _alternatives([_TYPE_WORDS.get(str(t), str(t)) for t in declared])
        return [(path, f"expected {want}, got {describe(value)}", False)]
    if key == "required":
        missing = [k for k in issue.keyword_value if isinstance(value, dict) and k not in value]
        return [(path, f"missing required key {quote(k)}", True) for k in missing]
    if key == "additionalProperties":
        return _additional(issue)
    if key == "enum":
        return [_enum(issue)]
    if key == "const":
        return [(path, f"must be {quote(issue.keyword_value)}, got {quote(value)}", False)]
    if key in ("oneOf", "anyOf"):
        return _combo(issue)
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return [_bounds(issue)]
    if key == "pattern":
        return [_pattern(issue)]
    if key in ("minLength", "minItems", "minProperties") and issue.keyword_value == 1:
        return [(path, "must not be empty", False)]
    if key == "minLength":
        return [(path, f"must be at least {issue.keyword_value} characters long", False)]
    if key == "maxLength":
        return [(path, f"must be at most {issue.keyword_value} characters long", False)]
    if key == "minItems":
        return [(path, f"needs at least {issue.keyword_value} items, got {len(value)}", False)]
    if key == "maxItems":
        return [(path, f"takes at most {issue.keyword_value} items, got {len(value)}", False)]
    if key == "maxProperties":
        names = ", ".join(quote(k) for k in value)
        count = "a single key" if issue.keyword_value == 1 else f"at most {issue.keyword_value} keys"
        return [(path, f"takes {count}, found {len(value)}: {names}", False)]
    if key == "minProperties":
        return [(path, f"needs at least {issue.keyword_value} keys", False)]
    if key == "uniqueItems":
        seen: list[Any] = []
        repeated = [v for v in value if v in seen or seen.append(v)]  # type: ignore[func-returns-value]
        return [(path, f"has repeated items: {', '.join(quote(v) for v in repeated)}", False)]
    return [(path, issue.text, False)]


def explain_all(issues: Sequence[SchemaIssue]) -> list[Finding]:
    """Findings for a set of issues. A ``type`` error at a path silences the other issues at that path: once
    the value has the wrong type, the rest is noise."""
    typed = {i.path for i in issues if i.keyword == "type"}
    out: list[Finding] = []
    for issue in issues:
        if issue.path in typed and issue.keyword != "type":
            continue
        out.extend(explain(issue))
    return out


def diagnostics(issues: Sequence[SchemaIssue], document: Document) -> list[Diagnostic]:
    """Located diagnostics for ``issues`` in ``document``, without repeats."""
    out: dict[tuple[JsonPath, str], Diagnostic] = {}
    for path, message, prefer_key in explain_all(issues):
        out.setdefault((path, message), document.diagnostic(path, message, prefer_key=prefer_key))
    return list(out.values())

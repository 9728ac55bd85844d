"""A quick verdict on plain data against a draft-07 schema, compiled into closures once: the fast path of the
case schema check, which runs once per case and is many times jsonschema's speed on a valid one.

A compiled check answers True (jsonschema would find no issue), False (it would find one) or None (this module
does not decide: a keyword it does not know, an ``enum`` of numbers, an integer written as ``1.0``). Only True
skips jsonschema: on False or None the caller asks jsonschema, which words the located messages, so a quick
verdict never changes what a user reads. ``tests/project/test_quickcheck.py`` checks the verdicts against
jsonschema's on generated documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Verdict = bool | None
Check = Callable[[Any], Verdict]
ANNOTATIONS = frozenset(
    {"title", "description", "examples", "default", "$schema", "$id", "$comment", "definitions"}
)
_TYPES: dict[str, Callable[[Any], Verdict]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # jsonschema counts 1.0 as an integer (draft 6 on); not decided here
    "integer": lambda v: None if isinstance(v, float) and v.is_integer() else type(v) is int,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_SCALARS = (str, bool, type(None))  # equal in jsonschema's sense exactly when equal in Python's and same type


def _yes(value: Any) -> Verdict:
    return True


def _no(value: Any) -> Verdict:
    return False


def _unsure(value: Any) -> Verdict:
    return None


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _yes
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> Verdict:
        verdict: Verdict = True
        for check in checks:
            found = check(value)
            if found is False:
                return False
            if found is None:
                verdict = None
        return verdict

    return every


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bound(limit: float, holds: Callable[[float, float], bool]) -> Check:
    return lambda v: holds(v, limit) if _number(v) else True


def _length(
    limit: int, kind: type[str] | type[list[Any]] | type[dict[str, Any]], holds: Callable[[int, int], bool]
) -> Check:
    return lambda v: holds(len(v), limit) if isinstance(v, kind) else True


def _members(allowed: list[Any]) -> Check:
    floats = any(type(a) is float for a in allowed)

    def member(value: Any) -> Verdict:
        if (
            type(value) is int
        ):  # jsonschema: 1 equals 1.0 but never True; an int equal to an allowed int is in
            if any(type(a) is int and a == value for a in allowed):
                return True
            return None if floats else False
        if not isinstance(value, _SCALARS):
            return None
        return any(type(a) is type(value) and a == value for a in allowed)

    return member


def _pattern(expression: str) -> Check:
    compiled = re.compile(expression)  # jsonschema also uses re.search
    return lambda v: compiled.search(v) is not None if isinstance(v, str) else True


def _required(keys: tuple[str, ...]) -> Check:
    def required(value: Any) -> Verdict:
        if isinstance(value, dict):
            for key in keys:
                if key not in value:
                    return False
        return True

    return required


def _unique(value: Any) -> Verdict:
    if not isinstance(value, list):
        return True
    if all(type(item) is str for item in value):
        return len(set(value)) == len(value)
    return None


# keywords decided by their own value alone
_KEYWORDS: dict[str, Callable[[Any], Check]] = {
    "enum": lambda allowed: _members(list(allowed)),
    "const": lambda const: _members([const]),
    "minimum": lambda low: _bound(low, lambda v, limit: v >= limit),
    "maximum": lambda high: _bound(high, lambda v, limit: v <= limit),
    "exclusiveMinimum": lambda low: _bound(low, lambda v, limit: v > limit),
    "exclusiveMaximum": lambda high: _bound(high, lambda v, limit: v < limit),
    "minLength": lambda low: _length(low, str, lambda n, limit: n >= limit),
    "maxLength": lambda high: _length(high, str, lambda n, limit: n <= limit),
    "minItems": lambda low: _length(low, list, lambda n, limit: n >= limit),
    "maxItems": lambda high: _length(high, list, lambda n, limit: n <= limit),
    "minProperties": lambda low: _length(low, dict, lambda n, limit: n >= limit),
    "maxProperties": lambda high: _length(high, dict, lambda n, limit: n <= limit),
    "pattern": lambda expression: _pattern(expression),
    "required": lambda keys: _required(tuple(keys)),
    "uniqueItems": lambda unique: _unique if unique is True else _yes,
}


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        if not ref.startswith("#/"):
            return _unsure
        if ref not in self.refs:
            self.refs[ref] = _unsure  # a recursive reference is not decided
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target[part]
            self.refs[ref] = self.compile(target)
        return self.refs[ref]

    def compile(self, node: Any) -> Check:
        if node is True or node == {}:
            return _yes
        if node is False:
            return _no
        if not isinstance(node, Mapping):
            return _unsure
        if "$ref" in node:  # draft-07: a $ref's sibling keywords are ignored
            return self.ref(str(node["$ref"]))
        keys = set(node) - ANNOTATIONS
        return self.fused(node, keys) or _all([self.keyword(key, node[key], node) for key in sorted(keys)])

    def fused(self, node: Mapping[str, Any], keys: set[str]) -> Check | None:
        """One closure for the two shapes most values of a case file have, a string with a length and a pattern
        and an object with its properties (half the time of one closure per keyword), or None."""
        if node.get("type") == "string" and keys <= {"type", "minLength", "pattern"}:
            low = int(node.get("minLength", 0))
            search = re.compile(node["pattern"]).search if "pattern" in node else None

            def string(value: Any) -> Verdict:
                return (
                    isinstance(value, str)
                    and len(value) >= low
                    and (search is None or search(value) is not None)
                )

            return string
        if node.get("type") == "object" and keys <= {
            "type",
            "required",
            "properties",
            "additionalProperties",
        }:
            required = tuple(node.get("required", ()))
            props = {key: self.compile(sub) for key, sub in (node.get("properties") or {}).items()}
            other = self.compile(node.get("additionalProperties", True))

            def obj(value: Any) -> Verdict:
                if not isinstance(value, dict):
                    return False
                for key in required:
                    if key not in value:
                        return False
                verdict: Verdict = True
                for key, item in value.items():
                    found = props.get(key, other)(item)
                    if found is False:
                        return False
                    if found is None:
                        verdict = None
                return verdict

            return obj
        return None

    def keyword(self, keyword: str, value: Any, node: Mapping[str, Any]) -> Check:
        simple = _KEYWORDS.get(keyword)
        if simple is not None:
            return simple(value)
        if keyword == "type":
            names = value if isinstance(value, list) else [value]
            tests = [_TYPES.get(n, _unsure) for n in names]
            return tests[0] if len(tests) == 1 else self.any_of(tests)
        if keyword == "items":  # a list of schemas (tuple validation) is not used by qlab's schemas
            return _unsure if isinstance(value, list) else self.each(self.compile(value))
        if keyword == "propertyNames":
            return self.property_names(self.compile(value))
        if keyword == "properties" or (keyword == "additionalProperties" and "properties" not in node):
            return self.obj(node)
        if keyword == "additionalProperties":
            return _yes  # decided with "properties"
        if keyword in ("anyOf", "allOf", "oneOf"):
            subs = [self.compile(sub) for sub in value]
            return {"anyOf": self.any_of, "allOf": _all, "oneOf": self.one_of}[keyword](subs)
        if keyword == "if":
            return self.conditional(node)
        if keyword in ("then", "else"):
            return _yes  # decided with "if" (without an "if", draft-07 ignores them)
        return _unsure  # not, patternProperties, dependencies, contains, format, ...

    def conditional(self, node: Mapping[str, Any]) -> Check:
        """draft-07 ``if``/``then``/``else``: ``then`` applies where ``if`` holds, ``else`` where it does not."""
        test = self.compile(node["if"])
        then = self.compile(node.get("then", True))
        otherwise = self.compile(node.get("else", True))

        def conditional(value: Any) -> Verdict:
            holds = test(value)
            if holds is None:
                return None
            return then(value) if holds else otherwise(value)

        return conditional

    @staticmethod
    def any_of(subs: list[Check]) -> Check:
        def any_of(value: Any) -> Verdict:
            verdict: Verdict = False
            for sub in subs:
                found = sub(value)
                if found:
                    return True
                if found is None:
                    verdict = None
            return verdict

        return any_of

    @staticmethod
    def one_of(subs: list[Check]) -> Check:
        def one_of(value: Any) -> Verdict:
            found = [sub(value) for sub in subs]
            return None if None in found else found.count(True) == 1

        return one_of

    def items(self, value: Any) -> Check:
        if isinstance(value, list):
            return _unsure  # tuple validation: not used by qlab's schemas
        return self.each(self.compile(value))

    @staticmethod
    def each(check: Check) -> Check:
        def each(value: Any) -> Verdict:
            if not isinstance(value, list):
                return True
            verdict: Verdict = True
            for item in value:
                found = check(item)
                if found is False:
                    return False
                if found is None:
                    verdict = None
            return verdict

        return each

    @staticmethod
    def property_names(check: Check) -> Check:
        def names(value: Any) -> Verdict:
            if not isinstance(value, dict):
                return True
            verdict: Verdict = True
            for key in value:
                found = check(key)
                if found is False:
                    return False
                if found is None:
                    verdict = None
            return verdict

        return names

    def obj(self, node: Mapping[str, Any]) -> Check:
        props = {key: self.compile(sub) for key, sub in (node.get("properties") or {}).items()}
        other = self.compile(node.get("additionalProperties", True))

        def obj(value: Any) -> Verdict:
            if not isinstance(value, dict):
                return True
            verdict: Verdict = True
            for key, item in value.items():
                found = props.get(key, other)(item)
                if found is False:
                    return False
                if found is None:
                    verdict = None
            return verdict

        return obj


def compile_schema(schema: Any, root: Mapping[str, Any] | None = None) -> Check:
    """The quick check of ``schema``; local ``$ref`` resolve in ``root`` (default: ``schema`` itself)."""
    return _Compiler(root if root is not None else schema).compile(schema)

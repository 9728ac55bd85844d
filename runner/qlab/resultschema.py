"""``schemas/result.schema.json`` and a fast checker for its per-case sub-schemas (the in-run ``output_schema``
guard validates every stage object of every case at every stage boundary).

Why not jsonschema here: measured on a search object with 8 Top-K rows, ``Draft7Validator.is_valid`` takes
1.2 ms, so 100,000 cases would spend 120 s in validation alone (fastjsonschema: 59 µs). The result schema uses
a small draft-07 subset, so it is compiled once: ``type``, ``enum``, ``const``, ``minimum``, ``required``,
``properties``, ``additionalProperties``, ``items``, ``anyOf``, ``allOf`` and local ``$ref``. Any other keyword is
refused at compile time. Two compiled forms: the yes/no check (generated Python source, the hot path: 5 µs for
a search object with 5 rows) and, only for a value that fails it, closures that name the first problem with its
JSON path. ``tests/test_resultschema.py`` checks the verdicts against jsonschema's on generated documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, cast

Check = Callable[[Any, str], "str | None"]  # (value, json path) -> first problem, or None
IGNORED = frozenset({"description", "title", "$schema", "$id", "definitions", "default", "examples"})
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


@cache
def load() -> dict[str, Any]:
    from qlab.resources import load_schema  # finds schemas/ in a wheel and in a checkout

    return load_schema("result")


def _compile(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    unknown = set(node) - IGNORED - {
        "type", "enum", "const", "minimum", "required", "properties", "additionalProperties", "items", "anyOf",
        "allOf", "$ref",
    }  # fmt: skip
    if unknown:
        raise ValueError(f"result schema uses unsupported keyword(s): {sorted(unknown)}")
    checks: list[Check] = []
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in memo:
            memo[name] = lambda v, p: None  # placeholder while compiling (recursive refs)
            memo[name] = _compile(defs[name], defs, memo)
        checks.append(lambda v, p: memo[name](v, p))
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        tests = [_TYPES[n] for n in names]
        label = " or ".join(names)
        checks.append(
            lambda v, p: None if any(t(v) for t in tests) else f"{p}: expected {label}, got {_kind(v)}"
        )
    if "enum" in node:
        allowed = list(node["enum"])
        checks.append(lambda v, p: None if v in allowed else f"{p}: {v!r} is not one of {allowed}")
    if "const" in node:
        const = node["const"]
        checks.append(lambda v, p: None if v == const else f"{p}: expected {const!r}")
    if "minimum" in node:
        low = node["minimum"]
        checks.append(lambda v, p: f"{p}: {v} is below {low}" if _TYPES["number"](v) and v < low else None)
    if "required" in node:
        keys = list(node["required"])
        checks.append(lambda v, p: _missing(v, p, keys))
    if "properties" in node or "additionalProperties" in node:
        checks.append(_object_check(node, defs, memo))
    if "items" in node:
        item = _compile(node["items"], defs, memo)
        checks.append(
            lambda v, p: (
                _first(item(x, f"{p}[{i}]") for i, x in enumerate(v)) if isinstance(v, list) else None
            )
        )
    for key, want_all in (("allOf", True), ("anyOf", False)):
        if key in node:
            subs = [_compile(s, defs, memo) for s in node[key]]
            checks.append(_combine(subs, want_all=want_all))
    return lambda v, p: _first(c(v, p) for c in checks)


Ok = Callable[[Any], bool]
_NUMBER = "(type({v}) is float or isinstance({v}, (int, float)) and not isinstance({v}, bool))"
_TYPE_TESTS = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "integer": "(type({v}) is int or isinstance({v}, int) and not isinstance({v}, bool))",
    "number": _NUMBER,
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
}

# the builtins the generated functions use, bound as defaults (locals): a global look-up per check costs ~15%
_LOCALS = "isinstance=isinstance, type=type, dict=dict, list=list, str=str, int=int, float=float, bool=bool"


class _Source:
    """The yes/no check of a schema as Python source, one function per definition (the hot path: no paths, no
    messages). Measured on a search object with 5 Top-K rows: 19 µs as nested closures, ~5 µs as one function;
    the in-run guard runs it for every case. Same verdicts as ``_compile`` (``tests/test_resultschema.py``)."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self.names: dict[str, str] = {}  # definition -> function name
        self.todo: list[str] = []
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def constant(self, value: Any) -> str:
        name = self.fresh("_c")
        self.constants[name] = value
        return name

    def ref(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.names:
            self.names[name] = self.fresh("_d")
            self.todo.append(name)
        return self.names[name]

    def function(self, name: str, node: Mapping[str, Any]) -> None:
        body: list[str] = []
        self.node(node, "v", body, "    ")
        self.lines += [f"def {name}(v, {_LOCALS}):", *body, "    return True", ""]

    def node(self, node: Mapping[str, Any], v: str, out: list[str], pad: str) -> None:
        """Lines that ``return False`` when ``v`` does not match ``node``."""
        if "$ref" in node:
            out.append(f"{pad}if not {self.ref(str(node['$ref']))}({v}): return False")
        if "type" in node:
            names = node["type"] if isinstance(node["type"], list) else [node["type"]]
            tests = " or ".join(_TYPE_TESTS[n].format(v=v) for n in names)
            out.append(f"{pad}if not ({tests}): return False")
        if "enum" in node:
            out.append(f"{pad}if {v} not in {self.constant(list(node['enum']))}: return False")
        if "const" in node:
            out.append(f"{pad}if not ({v} == {self.constant(node['const'])}): return False")
        if "minimum" in node:
            low = self.constant(node["minimum"])
            out.append(f"{pad}if {_NUMBER.format(v=v)} and {v} < {low}: return False")
        # when "type" is just "object" (or "array") it was checked above: the checks below need no guard
        typed = node.get("type")
        if "required" in node:
            keys = " and ".join(f"{key!r} in {v}" for key in node["required"])
            guard = "" if typed == "object" else f"isinstance({v}, dict) and "
            out.append(f"{pad}if {guard}not ({keys}): return False")
        if "properties" in node or "additionalProperties" in node:
            key, item = self.fresh("k"), self.fresh("x")
            body = self.properties(node, key, item, pad + "        ")
            self.loop(
                out,
                pad,
                f"isinstance({v}, dict)",
                typed == "object",
                f"for {key}, {item} in {v}.items():",
                body,
            )
        if "items" in node:
            item = self.fresh("x")
            body = []
            self.node(node["items"], item, body, pad + "        ")
            self.loop(out, pad, f"isinstance({v}, list)", typed == "array", f"for {item} in {v}:", body)
        for sub in node.get("allOf", ()):
            self.node(sub, v, out, pad)
        if "anyOf" in node:
            alternatives = []
            for sub in node["anyOf"]:
                alternatives.append(self.fresh("_a"))
                self.function(alternatives[-1], sub)
            out.append(f"{pad}if not ({' or '.join(f'{a}({v})' for a in alternatives)}): return False")

    @staticmethod
    def loop(out: list[str], pad: str, guard: str, typed: bool, header: str, body: list[str]) -> None:
        """``if guard: header: body`` (``body`` written two levels in), without the ``if`` when ``typed``."""
        if not body:
            return
        if typed:
            out += [f"{pad}{header}", *(line[4:] for line in body)]
        else:
            out += [f"{pad}if {guard}:", f"{pad}    {header}", *body]

    def properties(self, node: Mapping[str, Any], key: str, item: str, pad: str) -> list[str]:
        """The loop body over an object's items: the property's check, else additionalProperties'."""
        out: list[str] = []
        for index, (name, sub) in enumerate((node.get("properties") or {}).items()):
            inner: list[str] = []
            self.node(sub, item, inner, pad + "    ")
            out += [f"{pad}{'elif' if index else 'if'} {key} == {name!r}:", *(inner or [f"{pad}    pass"])]
        extra = node.get("additionalProperties", True)
        other: list[str] = []
        if extra is False:
            other = [f"{pad}    return False"]
        elif isinstance(extra, Mapping):
            self.node(extra, item, other, pad + "    ")
        if other and out:
            out += [f"{pad}else:", *other]
        elif other:
            out = [line[4:] for line in other]
        return out

    def build(self, root: Mapping[str, Any]) -> Ok:
        self.function("_root", root)
        while self.todo:
            name = self.todo.pop()
            self.function(self.names[name], self.defs[name])
        namespace: dict[str, Any] = dict(self.constants)
        # our own source, generated from our own schema
        exec(compile("\n".join(self.lines), "<qlab.resultschema>", "exec"), namespace)
        return cast(Ok, namespace["_root"])


def _object_check(node: Mapping[str, Any], defs: Mapping[str, Any], memo: dict[str, Check]) -> Check:
    props = {k: _compile(s, defs, memo) for k, s in node.get("properties", {}).items()}
    extra = node.get("additionalProperties", True)
    other: Check | None = (
        None
        if extra is True
        else (lambda v, p: f"{p}: unexpected property")
        if extra is False
        else _compile(extra, defs, memo)
    )

    def check(value: Any, path: str) -> str | None:
        if not isinstance(value, dict):
            return None
        for key, item in value.items():
            sub = props.get(key, other)
            if sub is not None:
                problem = sub(item, f"{path}.{key}")
                if problem:
                    return problem
        return None

    return check


def _combine(subs: list[Check], *, want_all: bool) -> Check:
    def check(value: Any, path: str) -> str | None:
        problems = [s(value, path) for s in subs]
        if want_all:
            return _first(problems)
        return None if any(p is None for p in problems) else _first(problems)

    return check


def _missing(value: Any, path: str, keys: list[str]) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in keys:
        if key not in value:
            return f"{path}: {key!r} is required"
    return None


def _first(problems: Any) -> str | None:
    for problem in problems:
        if problem:
            return str(problem)
    return None


def _kind(value: Any) -> str:
    return (
        "null"
        if value is None
        else {bool: "boolean", dict: "object", list: "array", str: "string"}.get(
            type(value),
            "integer"
            if isinstance(value, int)
            else "number"
            if isinstance(value, float)
            else type(value).__name__,
        )
    )


@cache
def checker(definition: str) -> tuple[Ok, Check]:
    """The compiled checks for ``definitions/<definition>`` of the result schema (e.g. ``search``, ``case``):
    a fast yes/no one, and one that explains the first problem with its JSON path."""
    defs = load()["definitions"]
    return _Source(defs).build(defs[definition]), _compile(defs[definition], defs, {})


@cache
def _artifact_checker(partial: bool) -> tuple[Ok, Check]:
    schema = load()
    skip = {"definitions", "required"} if partial else {"definitions"}
    defs, root = schema["definitions"], {k: v for k, v in schema.items() if k not in skip}
    return _Source(defs).build(root), _compile(root, defs, {})


def artifact_problem(value: Any, *, partial: bool = False) -> str | None:
    """The first problem of a whole result artifact against the result schema, as ``$.json.path: message``:
    readers (report, merge, promote, release) check it before they trust any field. ``partial`` lets top-level
    sections be absent (governance reads hand-trimmed artifacts); what is there must still fit."""
    ok, explain = _artifact_checker(partial)
    return None if ok(value) else explain(value, "$") or "$: invalid"


def problem(definition: str, value: Any, path: str = "$") -> str | None:
    """The first problem of ``value`` against ``definitions/<definition>``, as ``$.json.path: message``."""
    ok, explain = checker(definition)
    return None if ok(value) else explain(value, path) or f"{path}: invalid"

"""Plugin packages, and how an assertion type becomes part of the case schema.

A plugin package declares assertion types and report formats as entry points; the entry point's name is the
type's (or format's) name:

    [project.entry-points."qlab.assertions"]
    content_type = "qlab_example.content_type:ContentType"

    [project.entry-points."qlab.report_formats"]
    tap = "qlab_example.tap:render"

Each group is read once a process, when first needed. A name two packages register or a built-in has, an entry
point that does not import, or an object without the members its group needs is an InputError (exit 2) naming
the package. An assertion type's ``schema`` becomes its branch of the case schema (``assertion_branch``): the
shipped file's from the registries (``python -m qlab.docs``), the plugins' when the schema is loaded.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from qlab.contracts.errors import InputError

ASSERTIONS = "qlab.assertions"
REPORT_FORMATS = "qlab.report_formats"
_ASSERTION_MEMBERS = ("name", "stage", "needs_json", "schema", "problems", "check")


class PluginError(InputError):
    """An installed plugin package cannot be used (exit 2); the message names the package and what to do."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """One loaded entry point: its name, the object it names, and where it came from (for messages)."""

    name: str
    target: Any
    package: str
    value: str  # "module:attribute", as declared

    @property
    def origin(self) -> str:
        return f"plugin package {self.package!r} (entry point {self.name} = {self.value!r})"


def load(group: str, points: Iterable[metadata.EntryPoint]) -> dict[str, Plugin]:
    """Import each entry point of ``group``; a class is instantiated (a type written as a class). Two packages
    registering one name are refused."""
    found: dict[str, Plugin] = {}
    for point in points:
        package = point.dist.name if point.dist is not None else "?"
        if point.name in found:
            raise PluginError(
                f"{group} {point.name!r} is registered by two plugin packages, {found[point.name].package!r} "
                f"and {package!r}; uninstall one of them"
            )
        try:
            target = point.load()
            if isinstance(target, type):
                target = target()
        except Exception as exc:  # a plugin's own bug: reported as unusable input, not a qlab crash
            raise PluginError(
                f"plugin package {package!r}: entry point {point.name} = {point.value!r} ({group}) cannot be "
                f"loaded: {type(exc).__name__}: {exc}"
            ) from None
        found[point.name] = Plugin(point.name, target, package, point.value)
    return found


@cache
def installed(group: str) -> Mapping[str, Plugin]:
    """The plugins of ``group`` in the installed distributions, loaded once a process."""
    return load(group, metadata.entry_points(group=group))


def merged(kind: str, builtins: Mapping[str, Any], plugins: Mapping[str, Plugin]) -> dict[str, Any]:
    """``builtins`` and the plugins' targets in one table; a plugin may not take a built-in's name."""
    table = dict(builtins)
    for name, plugin in plugins.items():
        if name in table:
            raise PluginError(
                f"{plugin.origin}: {kind} {name!r} is built into qlab; give the plugin's one another name"
            )
        table[name] = plugin.target
    return table


def assertion_type(plugin: Plugin) -> Any:
    """The plugin's assertion type, once its members are checked: an execute-stage type named as its entry
    point, with an arguments schema qlab can fold into the case schema."""
    target = plugin.target
    missing = [member for member in _ASSERTION_MEMBERS if not hasattr(target, member)]
    if missing:
        raise PluginError(
            f"{plugin.origin}: the assertion type has no {', '.join(missing)} (see AssertionType)"
        )
    problems = []
    if target.name != plugin.name:
        problems.append(f"its name is {target.name!r}, not the entry point's {plugin.name!r}")
    if target.stage != "execute":
        problems.append(f"its stage is {target.stage!r}: a plugin checks the execute stage's response")
    problems += schema_problems(target.schema)
    if problems:
        raise PluginError(f"{plugin.origin}: {'; '.join(problems)}")
    return target


def schema_problems(schema: Any) -> list[str]:
    """What keeps ``schema`` (an assertion type's arguments) from becoming a branch of the case schema."""
    if not isinstance(schema, Mapping):
        return ["its schema is not a mapping"]
    properties = schema.get("properties", {})
    out = []
    if not isinstance(schema.get("description"), str):
        out.append("its schema has no description")
    if not isinstance(properties, Mapping) or not all(isinstance(v, Mapping) for v in properties.values()):
        out.append("its schema's properties are not a mapping of schemas")
    elif "type" in properties:
        out.append("its schema declares 'type', which is the assertion's own key")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        out.append("its schema's required is not a list of names")
    return out


def assertion_branch(name: str, stage: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The case schema's definition of assertion type ``name``: ``schema``'s arguments beside ``type``, nothing
    else allowed; ``schema``'s other keywords (a ``oneOf`` of required keys) kept."""
    rest = {k: v for k, v in schema.items() if k not in ("description", "properties", "required")}
    return {
        "type": "object",
        "title": name,
        "description": f"{stage}: {schema['description']}",
        "additionalProperties": False,
        "properties": {
            "type": {"const": name, "description": f"The assertion type: {name}."},
            **schema.get("properties", {}),
        },
        "required": ["type", *schema.get("required", [])],
        **rest,
    }


def with_assertions(case_schema: Mapping[str, Any], types: Iterable[Any]) -> dict[str, Any]:
    """A copy of ``case_schema`` whose ``assertion`` union also holds ``types`` (objects with ``name``, ``stage``
    and ``schema``), each as ``definitions.assertion_<name>`` after the union's existing branches."""
    out = copy.deepcopy(dict(case_schema))
    definitions = out["definitions"]
    for kind in types:
        definitions[f"assertion_{kind.name}"] = assertion_branch(kind.name, kind.stage, kind.schema)
        definitions["assertion"]["oneOf"].append({"$ref": f"#/definitions/assertion_{kind.name}"})
    ordered: dict[str, Any] = {}  # the file's order: the union, its branches, then the other definitions
    for key, value in definitions.items():
        if not key.startswith("assertion_"):
            ordered[key] = value
        if key == "assertion":
            ordered.update((k, v) for k, v in definitions.items() if k.startswith("assertion_"))
    out["definitions"] = ordered
    return out


def without_assertions(case_schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``case_schema`` with an empty ``assertion`` union and no branch definitions (what
    ``with_assertions`` builds the shipped schema from)."""
    out = copy.deepcopy(dict(case_schema))
    out["definitions"] = {k: v for k, v in out["definitions"].items() if not k.startswith("assertion_")}
    out["definitions"]["assertion"]["oneOf"] = []
    return out


def plugin_assertions(builtin: Iterable[str]) -> list[Any]:
    """The installed plugins' assertion types, checked (``assertion_type``); none may take a name of
    ``builtin``."""
    plugins = installed(ASSERTIONS)
    merged("assertion type", dict.fromkeys(builtin), plugins)
    return [assertion_type(plugin) for plugin in plugins.values()]

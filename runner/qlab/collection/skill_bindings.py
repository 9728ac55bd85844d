"""A release skill's bindings against the collection it is released on: the names it may use and the tools its
golden cases expect.

``release.<skill>.permissions`` names what the skill may call: a tool id, a family or a tag the collection
declares. A name it does not declare binds nothing — ``deliveriez`` for ``deliveries`` would only show up as a
trigger eval that never fires, with a recall message that points elsewhere. The golden cases' ``expected_target``
and ``expected_plan_tools`` are tool bindings too (for an MCP source, the names its ``tools/list`` declares). Each
unknown name is a located error with "Did you mean": in qlab.yaml for a permission, in the golden case file for
a tool. ``qlab validate`` reports them when it can build the collection; ``qlab release`` checks them before its
gates run (``skill_binding_unknown``, exit 2).
"""

from __future__ import annotations

from pathlib import Path

from qlab.adapters.fuzzy import did_you_mean
from qlab.collection.model import Collection
from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project.files import display_path, read_document
from qlab.project.model import Config, ReleaseSkill


def permission_names(collection: Collection) -> list[str]:
    """Every name a permission can bind: tool ids, families and tags, in that order, each once."""
    names = [t.id for t in collection.tools]
    names += [t.family for t in collection.tools if t.family]
    names += [tag for t in collection.tools for tag in t.tags]
    return list(dict.fromkeys(names))


def check(config: Config, collection: Collection) -> list[Diagnostic]:
    """Unknown permissions and golden-case tools of every release skill."""
    out: list[Diagnostic] = []
    for skill in config.release.values():
        out += check_skill(config, skill, collection)
    return sorted(out)


def check_skill(config: Config, skill: ReleaseSkill, collection: Collection) -> list[Diagnostic]:
    names = permission_names(collection)
    known = set(names)
    out: list[Diagnostic] = []
    path = Path(config.path)
    try:
        _raw, doc = read_document(path, display=display_path(path))
    except ConfigError:
        doc = None
    for index, name in enumerate(skill.permissions):
        if name in known:
            continue
        message = (
            f"permission {name!r} names no tool id, family or tag of the collection, so it binds nothing."
            f"{did_you_mean(name, names)}"
        )
        at = ("release", skill.name, "permissions", index)
        out.append(
            doc.diagnostic(at, message)
            if doc is not None
            else Diagnostic(display_path(path), skill.origin.line, skill.origin.col, "", message)
        )
    if skill.golden_cases:
        out += _golden_tools(config, skill, collection)
    return out


def _golden_tools(config: Config, skill: ReleaseSkill, collection: Collection) -> list[Diagnostic]:
    path = Path(config.path).parent / str(skill.golden_cases)
    try:
        _raw, doc = read_document(path, display=display_path(path))
    except ConfigError:
        return []  # qlab validate reports a golden case file that does not read, with its location
    ids = [t.id for t in collection.tools]
    known = set(ids)
    out = []
    for index, item in enumerate(doc.data if isinstance(doc.data, list) else ()):
        if not isinstance(item, dict):
            continue
        bound: list[tuple[tuple[str | int, ...], object]] = [
            (("expected_target",), item.get("expected_target"))
        ]
        bound += [
            (("expected_plan_tools", i), t) for i, t in enumerate(item.get("expected_plan_tools") or ())
        ]
        for at, name in bound:
            if isinstance(name, str) and name not in known:
                message = f"{name!r} is not a tool of the collection.{did_you_mean(name, ids)}"
                out.append(doc.diagnostic((index, *at), message))
    return out

"""Plugin packages: entry points loaded and checked, refusals that name the package, the case schema's branches."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from plugin_site import install
from qlab.contracts import extensions
from qlab.contracts.errors import EXIT_INPUT
from qlab.contracts.extensions import PluginError
from qlab.contracts.resources import shipped_schema

GOOD = """
class Even:
    name, stage, needs_json = "even_status", "execute", False
    schema = {"description": "the status is even.", "properties": {"note": {"type": "string"}}}
    def problems(self, args):
        return []
    def check(self, args, response):
        raise NotImplementedError
"""


def points(site: Path, group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group`` that the distributions in ``site`` declare (each knows its package)."""
    return [
        ep
        for dist in metadata.distributions(path=[str(site)])
        for ep in dist.entry_points
        if ep.group == group
    ]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "even_mod", raising=False)  # each test imports its own
    yield tmp_path
    sys.modules.pop("even_mod", None)


def test_an_entry_point_is_loaded_and_a_class_instantiated(site: Path) -> None:
    install(
        site, "even-plugin", {extensions.ASSERTIONS: {"even_status": "even_mod:Even"}}, {"even_mod.py": GOOD}
    )
    loaded = extensions.load(extensions.ASSERTIONS, points(site, extensions.ASSERTIONS))
    plugin = loaded["even_status"]
    assert plugin.package == "even-plugin" and plugin.value == "even_mod:Even"
    kind = extensions.assertion_type(plugin)
    assert kind.name == "even_status" and not isinstance(kind, type)


def test_two_packages_with_one_name_are_refused_by_name(site: Path) -> None:
    for package in ("first-plugin", "second-plugin"):
        install(
            site, package, {extensions.ASSERTIONS: {"even_status": "even_mod:Even"}}, {"even_mod.py": GOOD}
        )
    with pytest.raises(PluginError) as caught:
        extensions.load(extensions.ASSERTIONS, points(site, extensions.ASSERTIONS))
    assert caught.value.exit_code == EXIT_INPUT
    assert "'even_status' is registered by two plugin packages" in str(caught.value)
    assert "first-plugin" in str(caught.value) and "second-plugin" in str(caught.value)


def test_an_entry_point_that_does_not_import_names_its_package(site: Path) -> None:
    install(site, "broken-plugin", {extensions.REPORT_FORMATS: {"pdf": "missing_module:render"}})
    with pytest.raises(
        PluginError, match=r"plugin package 'broken-plugin': entry point pdf = 'missing_module:render'"
    ):
        extensions.load(extensions.REPORT_FORMATS, points(site, extensions.REPORT_FORMATS))


def test_a_built_in_name_is_refused(site: Path) -> None:
    install(
        site, "clash-plugin", {extensions.ASSERTIONS: {"http_status": "even_mod:Even"}}, {"even_mod.py": GOOD}
    )
    plugins = extensions.load(extensions.ASSERTIONS, points(site, extensions.ASSERTIONS))
    with pytest.raises(PluginError, match=r"'clash-plugin'.*assertion type 'http_status' is built into qlab"):
        extensions.merged("assertion type", {"http_status": object()}, plugins)


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (
            '"even_status", "execute"',
            '"odd", "execute"',
            "its name is 'odd', not the entry point's 'even_status'",
        ),
        ('"even_status", "execute"', '"even_status", "search"', "its stage is 'search'"),
        ('"description": "the status is even.", ', "", "its schema has no description"),
        ('{"note": {"type": "string"}}', '{"type": {}}', "its schema declares 'type'"),
        ('{"note": {"type": "string"}}}', '{}, "required": "note"}', "its schema's required is not a list"),
        ("    def check(self, args, response):\n        raise NotImplementedError\n", "", "has no check"),
    ],
)
def test_an_assertion_type_without_what_its_group_needs_is_refused(
    site: Path, old: str, new: str, problem: str
) -> None:
    assert old in GOOD
    files = {"even_mod.py": GOOD.replace(old, new)}
    install(site, "odd-plugin", {extensions.ASSERTIONS: {"even_status": "even_mod:Even"}}, files)
    plugin = extensions.load(extensions.ASSERTIONS, points(site, extensions.ASSERTIONS))["even_status"]
    with pytest.raises(PluginError, match="odd-plugin") as caught:
        extensions.assertion_type(plugin)
    assert problem in str(caught.value)


def test_a_branch_is_added_to_the_union_in_the_files_order() -> None:
    class Even:
        name, stage = "even_status", "execute"
        schema = {"description": "the status is even.", "properties": {"note": {"type": "string"}}}

    shipped = shipped_schema("case")
    extended = extensions.with_assertions(shipped, [Even()])
    definitions = list(extended["definitions"])
    assert definitions.index("assertion_even_status") == definitions.index("assertion_body_contains") + 1
    assert extended["definitions"]["assertion"]["oneOf"][-1] == {
        "$ref": "#/definitions/assertion_even_status"
    }
    assert extended["definitions"]["assertion_even_status"] == {
        "type": "object",
        "title": "even_status",
        "description": "execute: the status is even.",
        "additionalProperties": False,
        "properties": {
            "type": {"const": "even_status", "description": "The assertion type: even_status."},
            "note": {"type": "string"},
        },
        "required": ["type"],
    }
    assert "assertion_even_status" not in shipped["definitions"]  # the shipped schema is left as it was

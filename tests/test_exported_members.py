"""The public API (``qlab.__all__``, docs/library.md) is exactly what the package exports, sorted, each name
documented; and ``import qlab`` stays light (the names load on first use)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import qlab
from fresh import run_fresh


def test_all_is_sorted_and_every_name_resolves_to_a_documented_object() -> None:
    assert qlab.__all__ == sorted(qlab.__all__)
    for name in qlab.__all__:
        value = getattr(qlab, name)
        if name != "__version__":
            assert value.__doc__ and value.__module__.startswith("qlab."), name


def test_the_exported_names_are_all_the_package_offers() -> None:
    public = {name for name in dir(qlab) if not name.startswith("_")}
    submodules = {name for name in public if isinstance(getattr(qlab, name), ModuleType)}
    assert public - submodules == set(qlab.__all__) - {"__version__"}


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        qlab.run_projet  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "run_projet" in str(exc)
    else:
        raise AssertionError("qlab.run_projet resolved")


def test_import_qlab_loads_the_version_and_the_errors_only() -> None:
    code = "import json, sys\nimport qlab\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('qlab'))))"
    assert json.loads(run_fresh(code)) == ["qlab", "qlab.contracts", "qlab.contracts.errors", "qlab.version"]


def test_the_library_page_names_every_export() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "library.md").read_text(encoding="utf-8")
    for name in qlab.__all__:
        assert f"`{name}" in page, name

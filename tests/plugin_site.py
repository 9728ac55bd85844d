"""Plugin packages installed into a folder the way pip lays them out: the package's files, and a ``.dist-info``
with ``METADATA`` and ``entry_points.txt``. With the folder on ``sys.path`` (or ``PYTHONPATH`` for a child
process), ``importlib.metadata`` finds the entry points as it finds an installed wheel's; nothing is built and
no network is needed."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (mypy's dependency, installed with the dev extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugin"


def install(
    site: Path,
    name: str,
    entry_points: Mapping[str, Mapping[str, str]],
    files: Mapping[str, str] = {},
) -> Path:
    """Write package ``name`` into ``site``: ``files`` (relative path -> text) and its dist-info declaring
    ``entry_points`` (group -> {name: "module:attr"}). Returns ``site``."""
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8")
    sections = []
    for group, points in entry_points.items():
        sections.append(f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items()))
    (info / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
    return site


def install_example(site: Path) -> Path:
    """The example plugin package of docs/extending.md (``examples/plugin``), as its pyproject.toml declares it."""
    pyproject = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    for package in pyproject["tool"]["setuptools"]["packages"]:
        shutil.copytree(EXAMPLE / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    return install(site, pyproject["project"]["name"], pyproject["project"]["entry-points"])

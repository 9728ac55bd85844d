"""Files qlab ships: the JSON Schemas and the demo assets.

The schemas live in ``<repo>/schemas/``; the wheel carries them as ``qlab/schemas/`` (pyproject's
``force-include``). :func:`schema_path` looks inside the installed package first and then, for an editable
install or a checkout, in the repository. Demo assets (``qlab/demo/openapi.yaml``) are package data, read with
``importlib.resources``. Only the standard library is imported, so ``qlab --version`` stays light. The case
schema qlab validates with also holds the assertion types of installed plugin packages (``load_schema``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from qlab.contracts import extensions
from qlab.contracts.errors import QlabError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the qlab package
# short names used by ``qlab schema`` and the loader -> file names in schemas/
SCHEMA_FILES: dict[str, str] = {
    "config": "qlab.schema.json",
    "case": "case.schema.json",
    "result": "result.schema.json",
    "collection": "collection.schema.json",
    "proposal": "proposal.schema.json",
    "release-record": "release-record.schema.json",
    "suggestions": "suggestions.schema.json",
    "engine-request": "engine-request.schema.json",
    "engine-response": "engine-response.schema.json",
}


def schema_dirs() -> tuple[Path, ...]:
    """Where schemas are looked for, in order: inside the installed package, then the repository checkout."""
    return (_PACKAGE_DIR / "schemas", _PACKAGE_DIR.parent.parent / "schemas")


def schema_file_name(name: str) -> str:
    """``config`` -> ``qlab.schema.json``; ``engine-search`` -> ``engine-search.schema.json``; a file name as is."""
    if name in SCHEMA_FILES:
        return SCHEMA_FILES[name]
    return name if name.endswith(".json") else f"{name}.schema.json"


def schema_path(name: str) -> Path:
    """The file of schema ``name``. A missing schema is a packaging fault: QlabError (exit 3) saying where it
    was looked for."""
    file_name = schema_file_name(name)
    for folder in schema_dirs():
        candidate = folder / file_name
        if candidate.is_file():
            return candidate
    places = " or ".join(str(folder / file_name) for folder in schema_dirs())
    raise QlabError(f"schema {name!r} is not available: {places} does not exist")


@lru_cache(maxsize=32)
def shipped_schema(name: str) -> dict[str, Any]:
    """The parsed schema file ``name`` as shipped (cached; do not mutate)."""
    path = schema_path(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QlabError(f"schema {path} cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise QlabError(f"schema {path} is not a JSON object")
    return data


@lru_cache(maxsize=32)
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``name`` qlab validates with (cached; do not mutate): the shipped file, and for ``case`` the
    assertion types of the installed plugin packages (``qlab.contracts.extensions``)."""
    data = shipped_schema(name)
    if name in ("case", SCHEMA_FILES["case"]):
        builtin = [
            ref["$ref"].rpartition("/assertion_")[2] for ref in data["definitions"]["assertion"]["oneOf"]
        ]
        plugins = extensions.plugin_assertions(builtin)
        if plugins:
            return extensions.with_assertions(data, plugins)
    return data


def demo_asset(name: str) -> bytes:
    """The bytes of a demo asset shipped in ``qlab.demo`` (e.g. ``openapi.yaml``)."""
    resource = resources.files("qlab.demo").joinpath(name)
    if not resource.is_file():
        raise QlabError(f"demo asset {name!r} is not part of this qlab installation")
    return resource.read_bytes()


def package_files(package: str, folder: str = "") -> dict[str, bytes]:
    """Every file under ``folder`` of ``package`` (recursively), keyed by its path relative to ``folder``.

    Used by ``qlab init`` to copy the scaffold, which ships as package data.
    """
    root = resources.files(package)
    for part in filter(None, folder.split("/")):
        root = root.joinpath(part)
    out: dict[str, bytes] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__" or child.name.endswith((".py", ".pyc")):
                continue
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{rel}/")
            else:
                out[rel] = child.read_bytes()

    if root.is_dir():
        walk(root, "")
    return out

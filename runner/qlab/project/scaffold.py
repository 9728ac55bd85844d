"""``qlab init``'s library half: the files of a new project, written without clobbering anything.

- :func:`demo_files`: the demo project (a copy of the repository's qlab.yaml and gates/, shipped as package
  data in ``qlab/project/scaffold/``), the demo OpenAPI document and the two JSON Schemas the modelines point
  at. A freshly initialised folder passes ``qlab validate``.
- :func:`write_files`: writes a project's files; the starter for your own OpenAPI / Swagger document
  (``qlab init --from-openapi``) is made by ``qlab.project.starter`` and measured by ``qlab.run.starter``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from qlab.contracts.errors import InputError
from qlab.contracts.resources import demo_asset, package_files, schema_path


def schema_files() -> dict[str, bytes]:
    """The JSON Schemas the modelines of qlab.yaml and the case files point at, under ``schemas/``."""
    return {
        f"schemas/{schema_path(name).name}": schema_path(name).read_bytes() for name in ("config", "case")
    }


def demo_files() -> dict[str, bytes]:
    """Relative path -> content of the demo project."""
    files = package_files("qlab.project", "scaffold")
    if "qlab.yaml" not in files:
        raise InputError("the demo scaffold is missing from this qlab installation; reinstall qlab")
    return {**files, "openapi.yaml": demo_asset("openapi.yaml"), **schema_files()}


def write_files(target: Path, files: Mapping[str, bytes], *, force: bool) -> list[Path]:
    """Write ``files`` under ``target``. Without ``force``, refuses (InputError, nothing written) when any of
    them exists already. Returns the written paths, in order."""
    existing = [rel for rel in files if (target / rel).exists()]
    if existing and not force:
        shown = ", ".join(existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
        raise InputError(
            f"{target}: would overwrite {shown}; pass --force to overwrite, or choose another folder"
        )
    written = []
    for rel, content in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written

"""The build stage's library: OpenAPI 3.x / Swagger 2.0 / MCP / Python sources → a Collection of Tools,
its IO contracts, a deterministic cached artifact, and a readiness report.

The public names load on first use (PEP 562), so ``from qlab.collection.model import Tool`` — which every
stage does — does not import the builder; yaml, httpx, referencing and the mcp SDK load only when a build
needs them.

- ``build_collection(config, *, use_cache=True) -> BuildOutput``
- ``BuildOutput`` (collection, readiness, artifact_path, cached), ``Readiness`` (``to_dict()``)
- ``coverage_threshold(config)``: the build gate's ``schema_coverage_below`` value or the default
- ``load_tools(path_or_url, *, source_name="openapi")``: the Tools of one OpenAPI/Swagger document
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qlab.collection.builder import BuildOutput, build_collection, coverage_threshold
    from qlab.collection.openapi import load_tools
    from qlab.collection.readiness import Readiness

__all__ = ["BuildOutput", "Readiness", "build_collection", "coverage_threshold", "load_tools"]

_HOMES = {
    "BuildOutput": "qlab.collection.builder",
    "build_collection": "qlab.collection.builder",
    "coverage_threshold": "qlab.collection.builder",
    "Readiness": "qlab.collection.readiness",
    "load_tools": "qlab.collection.openapi",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'qlab.collection' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

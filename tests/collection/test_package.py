"""The package's public API: a sorted ``__all__`` whose names resolve, and a cheap import."""

from __future__ import annotations

import subprocess
import sys

import qlab.collection


def test_public_names_resolve_and_are_sorted() -> None:
    assert qlab.collection.__all__ == sorted(qlab.collection.__all__)
    for name in qlab.collection.__all__:
        assert getattr(qlab.collection, name) is not None


def test_importing_the_model_loads_no_heavy_library() -> None:
    code = (
        "import sys, qlab.collection, qlab.collection.model; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'yaml', 'httpx', 'referencing', 'mcp', 'jsonschema'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""What ``qlab search`` and ``qlab plan`` share: the engine under test for one query, and the table helpers.

The engine comes from qlab.yaml (``--config``, else the nearest qlab.yaml): its collection is built (or reused
from the build cache) and its ``engine`` section picks the engine, exactly as ``qlab run`` does. ``--spec FILE``
skips qlab.yaml and searches one OpenAPI/Swagger document with the built-in engine: handy for a spec that has
no project yet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from qlab.collection.model import Collection
from qlab.engine.base import Engine

CONFIG_OPTION = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="qlab.yaml (default: ./qlab.yaml, searched upwards to the repository root).",
)
SPEC_OPTION = click.option(
    "--spec",
    type=str,
    default=None,
    help="Search this OpenAPI/Swagger file or URL with the built-in engine instead of qlab.yaml's collection.",
)


def open_engine(config_path: Path | None, spec: str | None) -> tuple[Engine, Collection]:
    """The engine and collection for one query (see the module docstring)."""
    if spec is not None:
        from qlab.collection.contracts import find_contracts
        from qlab.collection.openapi import load_tools
        from qlab.engine.builtin import BuiltinEngine

        tools = load_tools(spec, source_name="spec")
        collection = Collection(tuple(tools), tuple(find_contracts(tools)))
        return BuiltinEngine(collection), collection
    from qlab.collection.builder import build_collection
    from qlab.engine.registry import make_engine
    from qlab.project import find_config, load_project

    path = config_path if config_path is not None else find_config()
    config = load_project(path, case_files=[]).config
    collection = build_collection(config, use_cache=True).collection
    return make_engine(config.engine, collection, base_dir=Path(config.path).parent), collection


def close(engine: Engine) -> None:
    closer = getattr(engine, "close", None)
    if callable(closer):
        closer()


def parse_entity(text: str) -> tuple[str, Any]:
    """``name=value``; the value is read as JSON when it parses (``5``, ``true``, ``["a"]``), else a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise click.BadParameter(f"{text!r} is not name=value", param_hint="--entity")
    try:
        return name, json.loads(raw)
    except ValueError:
        return name, raw


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(str(cell).ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]

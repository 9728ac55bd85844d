"""What the governance commands need from the rest of qlab: the project, the collection and the engine.

Kept in one place so the commands stay thin: ``promote`` works without a qlab.yaml (the built-in rules), the others
need one; ``learn shadow`` and ``release`` build the collection (``qlab.collection.build_collection``) and
make engines through the engine registry (``qlab.engine.registry.make_engine``) with the project's knowledge applied
(``qlab.engine.knowledge``), exactly as ``qlab run`` does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from qlab.collection.model import Collection
from qlab.contracts.errors import InputError
from qlab.engine.base import Engine
from qlab.engine.knowledge import load_knowledge, with_knowledge
from qlab.project import Project, find_config, load_project
from qlab.project.model import Config

EngineFactory = Callable[[Collection], Engine]


def optional_config(explicit: str | None) -> Config | None:
    """qlab.yaml's config when ``--config`` is given or one is found upwards; None when there is none."""
    if explicit is None:
        try:
            found = find_config()
        except InputError:
            return None
        return load_project(found).config
    return load_project(explicit).config


def project(explicit: str | None) -> Project:
    """The project of ``--config`` (default: the nearest qlab.yaml); ConfigError/InputError exit 2."""
    return load_project(explicit)


def collection_and_engines(config: Config) -> tuple[Collection, EngineFactory]:
    """Build the collection (cached like ``qlab run``) and an engine factory for it and its shadow copies."""
    builder = importlib.import_module("qlab.collection")
    collection: Collection = builder.build_collection(config).collection
    registry = importlib.import_module("qlab.engine.registry")
    base = Path(config.path).parent
    knowledge = load_knowledge(config.learning.knowledge_file, base_dir=base)

    def factory(target: Collection) -> Engine:
        return with_knowledge(registry.make_engine(config.engine, target, base_dir=base), knowledge)

    return collection, factory


def default_result(config: Config) -> Path:
    """The result artifact ``qlab run`` writes for this config (``output.dir`` / ``output.result``)."""
    return Path(config.path).parent / config.output.dir / config.output.result

"""The engine kinds: ``engine.type`` in qlab.yaml -> a factory that builds the engine under test.

A literal dict, the one place that lists them; the config schema's ``engine.type`` enum is tested against it.
It is not a plugin point: your own engine is ``engine.type: python`` (an object at ``module:attr``) or
``http`` (a service), which need no package.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from qlab.adapters import fuzzy
from qlab.collection.model import Collection
from qlab.contracts.errors import InputError
from qlab.engine.base import Engine
from qlab.project.model import EngineConfig

if TYPE_CHECKING:
    from qlab.engine.llm import LLMClient

EngineFactory = Callable[[EngineConfig, Collection, Path], Engine]


def _builtin(config: EngineConfig, collection: Collection, base_dir: Path) -> Engine:
    from qlab.engine.builtin import BuiltinEngine

    return BuiltinEngine(collection, llm=_llm(config, base_dir))


def _llm(config: EngineConfig, base_dir: Path) -> LLMClient | None:
    """The LLM client when ``engine.llm`` is configured (httpx is imported only then), else None."""
    if config.llm is None:
        return None
    from qlab.engine.llm import LLMClient

    return LLMClient(config.llm, base_dir=base_dir, max_bytes=config.limits.reply_bytes)


def _hybrid(config: EngineConfig, collection: Collection, base_dir: Path) -> Engine:
    """The built-in engine with its search fused with embedding similarity (the ``qualitylab[semantic]`` extra).
    Without the extra: InputError (exit 2) naming the install command. Document vectors are cached in the
    project's build cache folder (``.qlab/cache``)."""
    from qlab.engine import semantic
    from qlab.engine.hybrid import HybridEngine

    embedder = semantic.load()
    cache = base_dir / ".qlab" / "cache"
    return HybridEngine(collection, embedder=embedder, cache_dir=cache, llm=_llm(config, base_dir))


def _http(config: EngineConfig, collection: Collection, base_dir: Path) -> Engine:
    from qlab.engine.http_engine import HttpEngine

    return HttpEngine(config)


def _python(config: EngineConfig, collection: Collection, base_dir: Path) -> Engine:
    from qlab.engine.python_engine import make_python_engine

    if not config.object:
        raise InputError("engine.object: a python engine needs 'module:attr' (engine.object)")
    return make_python_engine(config.object, collection, base_dir=base_dir)


ENGINES: dict[str, EngineFactory] = {
    "builtin": _builtin,
    "hybrid": _hybrid,
    "http": _http,
    "python": _python,
}


def make_engine(config: EngineConfig, collection: Collection, *, base_dir: Path) -> Engine:
    """The engine ``config`` asks for, over ``collection``. Relative paths resolve from ``base_dir``."""
    factory = ENGINES.get(config.type)
    if factory is None:
        hint = fuzzy.did_you_mean(config.type, ENGINES)
        raise InputError(f"engine.type: {config.type!r} is not a known engine ({', '.join(ENGINES)}).{hint}")
    return factory(config, collection, base_dir)

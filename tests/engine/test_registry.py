"""The engine registry: the four kinds, unknown names, duplicates refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.engine import registry
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.http_engine import HttpEngine
from qlab.engine.llm import LLMClient
from qlab.errors import InputError, QlabError
from qlab.project.model import EngineConfig, LLMConfig

from .helpers import collection


def test_the_registry_lists_the_four_engines() -> None:
    assert list(registry.ENGINES) == ["builtin", "hybrid", "http", "python"]


def test_builtin_is_the_default_and_gets_the_llm_client(tmp_path: Path) -> None:
    engine = registry.make_engine(EngineConfig(), collection(), base_dir=tmp_path)
    assert isinstance(engine, BuiltinEngine) and engine.llm is None
    config = EngineConfig(llm=LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", cache_dir="c"))
    with_llm = registry.make_engine(config, collection(), base_dir=tmp_path)
    assert isinstance(with_llm, BuiltinEngine) and isinstance(with_llm.llm, LLMClient)
    assert with_llm.llm.cache_dir == tmp_path / "c"


def test_http_engine(tmp_path: Path) -> None:
    engine = registry.make_engine(
        EngineConfig(type="http", url="http://127.0.0.1:9/"), collection(), base_dir=tmp_path
    )
    assert isinstance(engine, HttpEngine) and engine.url == "http://127.0.0.1:9"


def test_unknown_engine_type_suggests_a_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"'buitin' is not a known engine .* Did you mean 'builtin'"):
        registry.make_engine(EngineConfig(type="buitin"), collection(), base_dir=tmp_path)  # type: ignore[arg-type]


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(QlabError, match="already registered"):
        registry.register("http", registry.ENGINES["http"])
    registry.register("extra-test-engine", registry.ENGINES["builtin"])
    try:
        assert "extra-test-engine" in registry.ENGINES
    finally:
        del registry.ENGINES["extra-test-engine"]

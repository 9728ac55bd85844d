"""The engine kinds: the four of them, the config schema's enum, unknown names."""

from __future__ import annotations

from pathlib import Path
from typing import get_args, get_type_hints

import pytest

from qlab.contracts.errors import InputError
from qlab.contracts.resources import load_schema
from qlab.engine import registry
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.http_engine import HttpEngine
from qlab.engine.llm import LLMClient
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


def test_the_config_schema_and_model_list_exactly_these_kinds() -> None:
    engine = load_schema("config")["definitions"]["engine"]
    assert engine["properties"]["type"]["enum"] == list(registry.ENGINES)
    assert list(get_args(get_type_hints(EngineConfig)["type"])) == list(registry.ENGINES)

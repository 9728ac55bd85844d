"""The python engine: ``module:attr`` naming an engine object or a factory; replies checked like http ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qlab.contracts.errors import InputError
from qlab.engine.python_engine import make_python_engine
from qlab.engine.registry import make_engine
from qlab.project.model import EngineConfig

from .helpers import ROOT, collection

SPEC = "tests.engine.team_engine"


def test_a_factory_builds_the_engine_and_dict_replies_are_parsed() -> None:
    engine = make_python_engine(f"{SPEC}:make", collection(), base_dir=ROOT)
    assert engine.name == "keyword"
    found = engine.search("track delivery", k=3)
    assert found.rows[0].tool_id == "trackDelivery"
    selection = engine.select("track delivery", found, entities={}, llm_target=None)
    assert (selection.selected_target, selection.reason_codes) == ("trackDelivery", ("team_rule",))
    plan = engine.plan("track delivery", "trackDelivery", entities={"deliveryId": "D-1"})
    assert (plan.plan_id, plan.tools, dict(plan.steps[0].arguments)) == (
        "team-trackDelivery",
        ("trackDelivery",),
        {"deliveryId": "D-1"},
    )


def test_a_class_is_a_factory_and_an_instance_is_used_as_is() -> None:
    assert make_python_engine(f"{SPEC}:KeywordEngine", collection(), base_dir=ROOT).search("order", k=2).rows
    assert make_python_engine(f"{SPEC}:INSTANCE", collection(), base_dir=ROOT).search("order", k=2).rows == ()


def test_through_the_registry_with_the_config_folder_importable(tmp_path: Path) -> None:
    (tmp_path / "my_engine.py").write_text(
        "from tests.engine.team_engine import KeywordEngine as Engine\n", encoding="utf-8"
    )
    engine = make_engine(
        EngineConfig(type="python", object="my_engine:Engine"), collection(), base_dir=tmp_path
    )
    assert engine.search("get order", k=1).rows[0].tool_id == "getOrder"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "is not 'module:attr'"),
        ("tests.engine.nope:X", "cannot import module 'tests.engine.nope'"),
        (f"{SPEC}:Keywordengine", "'Keywordengine' not found. Did you mean 'KeywordEngine'?"),
        (f"{SPEC}:broken_factory", "raised RuntimeError: no model file"),
        (f"{SPEC}:incomplete", "returned an object without select, plan"),
        (f"{SPEC}:Incomplete", "raised TypeError"),  # a class is a factory: it must take the collection
    ],
)
def test_load_errors(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        make_python_engine(spec, collection(), base_dir=ROOT)


def test_wrong_reply_types() -> None:
    engine = make_python_engine(f"{SPEC}:wrong_types", collection(), base_dir=ROOT)
    with pytest.raises(
        InputError, match=re.escape("search reply: $: expected a SearchResult or a dict, got str")
    ):
        engine.search("q", k=1)
    with pytest.raises(InputError, match=re.escape("$.overrode_llm: expected a boolean")):
        engine.select("q", engine_result(), entities={}, llm_target=None)


def engine_result():  # type: ignore[no-untyped-def]
    from qlab.engine.types import SearchResult

    return SearchResult(())


def test_a_python_engine_needs_an_object() -> None:
    with pytest.raises(InputError, match=r"engine\.object"):
        make_engine(EngineConfig(type="python"), collection(), base_dir=ROOT)

"""The search, select and plan assertion types: one per name the case model assigns to those stages."""

from __future__ import annotations

from qlab.project.model import ENGINE_ASSERTIONS
from qlab.stages.engine_checks import TYPES


def test_every_engine_assertion_of_the_model_has_a_type_with_its_stage() -> None:
    assert {name: kind.stage for name, kind in TYPES.items()} == {
        name: stage for stage, names in ENGINE_ASSERTIONS.items() for name in names
    }

"""The collector during a run: frozen while a command runs, rare full collections, everything restored after."""

from __future__ import annotations

import gc

import pytest

from qlab.run.heap import frozen_heap, settle


def test_a_nested_block_keeps_the_outer_one_frozen_and_the_outermost_restores_everything() -> None:
    """Rule: what a command built stays frozen until its outermost block ends (the runner's own block inside
    the command's must not hand the loaded cases back to the collector), and the settings come back after."""
    before = gc.get_threshold()
    gc.unfreeze()
    with frozen_heap():
        assert gc.get_threshold()[2] > before[2]  # full collections rarer
        kept = [object() for _ in range(3)]  # noqa: F841 - lives until the block ends
        loaded = [[i] for i in range(100)]
        settle()
        frozen = gc.get_freeze_count()
        assert frozen >= len(loaded)
        with frozen_heap():
            settle()
        assert gc.get_freeze_count() >= frozen  # the inner block handed nothing back
        assert gc.get_threshold()[2] > before[2]
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_settle_outside_a_block_freezes_nothing() -> None:
    gc.unfreeze()
    settle()
    assert gc.get_freeze_count() == 0


def test_the_block_restores_the_collector_when_the_command_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

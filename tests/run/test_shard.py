"""Sharding: the i/N spec, a deterministic partition by stable id, durations balancing, the fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.errors import InputError, UsageError
from qlab.run.shard import ShardSpec, assign, durations_of, load_durations, partition, selection_fingerprint


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1", "1/3/4", ""])
def test_bad_specs(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        ShardSpec.parse(text)


def test_parse() -> None:
    assert ShardSpec.parse(" 2/3 ") == ShardSpec(2, 3) and ShardSpec(2, 3).label == "2-of-3"


def test_partition_is_complete_disjoint_and_order_independent() -> None:
    ids = [f"case-{i:03d}" for i in range(50)]
    shards = [
        set(partition([type("C", (), {"id": i})() for i in ids], ShardSpec(s, 3), key="id"))
        for s in (1, 2, 3)
    ]
    owners = assign(ids, 3)
    assert owners == assign(list(reversed(ids)), 3)  # input order does not matter
    assert sorted(len([i for i in ids if owners[i] == s]) for s in (1, 2, 3)) == [16, 17, 17]
    assert sum(len(s) for s in shards) == 50


def test_partition_keeps_selection_order() -> None:
    class C:
        def __init__(self, i: str) -> None:
            self.id = i

    items = [C(i) for i in ("z", "a", "m", "b")]
    mine = partition(items, ShardSpec(1, 2), key="id")
    assert [c.id for c in mine] == [c.id for c in items if assign(["z", "a", "m", "b"], 2)[c.id] == 1]


def test_durations_balance_greedily_and_unknown_ids_get_the_mean() -> None:
    durations = {"a": 10.0, "b": 1.0, "c": 1.0, "d": 8.0}
    owners = assign(["a", "b", "c", "d", "e"], 2, durations=durations)
    # longest first: a (10) -> 1, d (8) -> 2, e (the mean, 5) -> 2 (load 13), b -> 1 (11), c -> 1 (12)
    assert owners == {"a": 1, "d": 2, "e": 2, "b": 1, "c": 1}


def test_fingerprint_depends_on_ids_config_and_commit() -> None:
    base = selection_fingerprint(["b", "a"], config_digest="c1", commit="x")
    assert base == selection_fingerprint(["a", "b"], config_digest="c1", commit="x")
    assert base != selection_fingerprint(["a"], config_digest="c1", commit="x")
    assert base != selection_fingerprint(["a", "b"], config_digest="c2", commit="x")
    assert base != selection_fingerprint(["a", "b"], config_digest="c1", commit="y")


def test_durations_file(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"a": 1.5, "b": 2}), encoding="utf-8")
    assert load_durations(path) == {"a": 1.5, "b": 2.0}
    path.write_text(json.dumps({"a": "slow"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"\$\.a: expected a number"):
        load_durations(path)
    with pytest.raises(InputError, match="not found"):
        load_durations(tmp_path / "missing.json")
    path.write_text('{\n  "a": 1,\n  b: 2}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_durations(path)
    assert (
        str(caught.value) == f"{path}:3:3: $: invalid JSON: Expecting property name enclosed in double quotes"
    )
    assert durations_of(
        [{"case_id": "b", "latency_ms": {"search": 500.0, "plan": 250.0}}, {"case_id": "a"}]
    ) == {"a": 0.0, "b": 0.75}

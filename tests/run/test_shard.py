"""Sharding: the i/N spec, a deterministic partition by stable id, durations balancing, the fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.contracts.errors import InputError, UsageError
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


# ----------------------------------------------------------------------------------- edges


@pytest.mark.parametrize("text", ["1/1", "1/2", "2/2", "3/3"])
def test_every_index_from_1_to_n_is_a_shard(text: str) -> None:
    index, total = map(int, text.split("/"))
    assert ShardSpec.parse(text) == ShardSpec(index, total)


@pytest.mark.parametrize(("text", "most"), [("0/3", 3), ("4/3", 3), ("1/0", 1), ("0/0", 1)])
def test_an_index_out_of_range_says_the_range(text: str, most: int) -> None:
    with pytest.raises(UsageError) as caught:
        ShardSpec.parse(text)
    assert str(caught.value) == f"--shard {text!r}: the index must be between 1 and {most} (1-based)"


def test_the_fingerprint_and_the_manifest_are_the_documented_sha256() -> None:
    import hashlib

    ids = ["b", "a", "é"]
    body = "".join(f"{i}\n" for i in sorted(ids))
    expected = hashlib.sha256(f"{body}config:cfg\ncommit:\n".encode()).hexdigest()
    assert selection_fingerprint(ids, config_digest="cfg", commit=None) == f"sha256:{expected}"
    assert selection_fingerprint(ids, config_digest="cfg", commit="") == f"sha256:{expected}"
    with_commit = hashlib.sha256(f"{body}config:cfg\ncommit:abc\n".encode()).hexdigest()
    assert selection_fingerprint(ids, config_digest="cfg", commit="abc") == f"sha256:{with_commit}"
    from qlab.run.shard import case_manifest

    assert case_manifest([*ids, "a"]) == {
        "count": 3,
        "digest": "sha256:" + hashlib.sha256(body.encode()).hexdigest(),
    }


def test_partition_balances_by_the_durations_it_is_given() -> None:
    class C:
        def __init__(self, i: str) -> None:
            self.id = i

    items = [C(i) for i in "abcde"]
    durations = {"a": 10.0, "b": 1.0, "c": 1.0, "d": 8.0}
    first = [c.id for c in partition(items, ShardSpec(1, 2), key="id", durations=durations)]
    assert first == ["a", "b", "c"]  # as test_durations_balance_greedily_and_unknown_ids_get_the_mean assigns


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2]", "$: expected an object {case_id: seconds}"),
        (b'{"a": -1}', "$.a: expected a number of seconds >= 0, got -1"),
        (b'{"a": true}', "$.a: expected a number of seconds >= 0, got True"),
        (b'{"a": null}', "$.a: expected a number of seconds >= 0, got None"),
        (b"\xff\xfe not utf-8", "not a readable JSON durations file: "),
    ],
)
def test_a_bad_durations_file_is_named_with_its_json_path(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        load_durations(path)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert load_durations(_ok(tmp_path)) == {"a": 0.0, "b": 1.5}  # and a good file beside it reads


def _ok(tmp_path: Path) -> Path:
    path = tmp_path / "ok.json"
    path.write_text('{"a": 0, "b": 1.5}', encoding="utf-8")
    return path


def test_a_folder_is_not_a_durations_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_durations(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path}: not a regular file")


def test_durations_of_rounds_to_microseconds_and_ignores_odd_latencies() -> None:
    assert durations_of(
        [{"case_id": "a", "latency_ms": {"s": 1.23456789}}, {"case_id": "b", "latency_ms": [5]}]
    ) == {
        "a": 0.001235,
        "b": 0.0,
    }

"""Rule: values Python's ``json`` reads but strict JSON cannot hold — ``NaN``, ``Infinity``, ``1e999999`` (beyond
a double) and a lone UTF-16 surrogate (``"\\ud800"``) — in an API's response never crash the run: the case fails
as ``invalid_json`` (the message says which value), and the result is written, as strict JSON in UTF-8.

On 6b179e1 an assertion recording such a value crashed the run (exit 3) and no result was written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hostile.project import api_project, run
from hostile.server import JSON_VALUES, HostileServer
from qlab.adapters import strictjson
from reliability.project import Op, reasons

SAID = {
    "nan": "it holds NaN",
    "infinity": "it holds Infinity",
    "huge": "it holds the number 1e999999",
    "surrogate": "$.data.value holds a lone UTF-16 surrogate",
}


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the result file")

    return json.loads(text, parse_constant=refuse)


def test_each_value_fails_its_case_and_the_result_is_strict_json(
    tmp_path: Path, hostile: HostileServer
) -> None:
    ops = [
        Op(f"read{kind.title()}", "GET", f"/json/{kind}", f"Read the {kind} reading") for kind in JSON_VALUES
    ]
    assertions = [{"type": "json_path_equals", "path": "$.data.value", "equals": 1}]
    config = api_project(tmp_path / "p", hostile.url, ops, assertions=assertions)
    done = run(config)
    assert done.code == 1 and "internal error" not in done.console, done.console
    result = config.parent / "out" / "result.json"
    assert reasons(result) == {op.op_id: ("failed", "invalid_json") for op in ops}
    _strict(result.read_bytes().decode("utf-8"))  # UTF-8 throughout, and no NaN/Infinity token
    for kind, said in SAID.items():
        assert said in done.console, (kind, done.console)
    junit = (config.parent / "out" / "junit.xml").read_bytes().decode("utf-8")
    assert junit.count("invalid_json") >= len(ops)


@pytest.mark.parametrize("kind", sorted(JSON_VALUES))
def test_json_of_refuses_what_strict_json_cannot_hold(kind: str) -> None:
    with pytest.raises(strictjson.NotStrictJSON) as refused:
        strictjson.json_of(JSON_VALUES[kind])
    assert SAID[kind] in str(refused.value)
    str(refused.value).encode("utf-8")  # the message itself is printable


def test_json_of_keeps_what_strict_json_holds() -> None:
    assert strictjson.json_of(b'{"a": [1.5, -2e300, "\\ud83d\\ude00", "\\u00e9"]}') == {
        "a": [1.5, -2e300, "\U0001f600", "é"]
    }

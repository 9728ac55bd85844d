"""Python callables → Tools: module, function, list, dict, class; schemas from hints, text from docstrings."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.model import MutationClass, Tool
from qlab.collection.python_source import SOURCE
from qlab.contracts.errors import SpecError
from qlab.project.model import Source

from .helpers import FIXTURES

FOLDER = FIXTURES / "python"


def _tools(location: str) -> list[Tool]:
    source = Source(name="py", kind="python", location=location)
    return list(SOURCE.tools(SOURCE.snapshot(source, base_dir=FOLDER)).tools)


def test_a_module_gives_its_public_functions_in_source_order() -> None:
    ids = [t.id for t in _tools("sample_tools")]
    assert ids == ["get_member", "list_orders", "ship", "delete_order", "flagged"]


def test_function_with_google_docstring_and_hints() -> None:
    (tool,) = _tools("sample_tools:get_member")
    assert (tool.kind, tool.family, tool.source) == ("python", "sample_tools", "py")
    assert tool.summary == "Get one member by number."
    assert tool.description == "Looks the member up in the registry."
    assert [(p.name, p.location, p.required, p.description) for p in tool.parameters] == [
        ("member_no", "argument", True, "Member number, e.g. M-1001."),
        ("tier", "argument", False, "Only if the member has this tier."),
        ("verbose", "argument", False, "Include the history, which is long."),
    ]
    assert tool.parameters[0].schema == {"type": "string"}
    assert tool.parameters[1].schema == {
        "anyOf": [{"enum": ["basic", "plus"], "type": "string"}, {"type": "null"}],
        "default": None,
    }
    assert tool.parameters[2].schema == {"type": "boolean", "default": False}
    assert tool.responses == {"result": {"type": "object", "additionalProperties": {"type": "string"}}}
    assert tool.mutation is MutationClass.READ_ONLY and tool.idempotent is True


def test_numpy_docstring_literal_and_typeddict() -> None:
    (tool,) = _tools("sample_tools:list_orders")
    assert [p.description for p in tool.parameters] == [
        "Member number.",
        "Only orders in this status.",
        "At most this many.",
    ]
    assert tool.parameters[1].schema == {"enum": ["open", "paid"], "type": "string", "default": "open"}
    assert tool.responses["result"] == {
        "type": "array",
        "items": {
            "type": "object",
            "title": "Order",
            "properties": {"order_id": {"type": "string"}, "total": {"type": "number"}},
            "required": ["order_id", "total"],
        },
    }


def test_rest_docstring_dataclass_and_annotated() -> None:
    (tool,) = _tools("sample_tools:ship")
    address, priority, note = tool.parameters
    assert address.description == "Where to." and address.required
    assert address.schema == {
        "type": "object",
        "title": "Address",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["street"],
    }
    assert priority.description == "The priority."
    assert priority.schema == {"type": "integer", "description": "1 is fastest", "example": 1}
    assert tool.examples == {"priority": 1}
    assert note.schema == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert tool.responses == {}  # returns None
    assert tool.mutation is MutationClass.MUTATING


def test_dict_list_and_class_targets() -> None:
    assert [(t.id, t.mutation.value) for t in _tools("sample_tools:TOOLS")] == [
        ("lookup", "read_only"),
        ("remove", "destructive"),
    ]
    assert [t.id for t in _tools("sample_tools:SOME")] == ["get_member", "ship"]
    store = _tools("sample_tools:Store")
    assert [t.id for t in store] == ["Store.find_item", "Store.ping", "Store.open_store"]
    assert [p.name for p in store[0].parameters] == ["sku"]  # self is not an input
    assert [p.name for p in store[2].parameters] == ["city"]  # nor cls
    assert {t.family for t in store} == {"Store"}


def test_qlab_mutation_attribute_wins() -> None:
    (tool,) = _tools("sample_tools:flagged")
    assert tool.mutation is MutationClass.READ_ONLY


def test_snapshot_digest_changes_with_the_location() -> None:
    a = SOURCE.snapshot(Source(name="py", kind="python", location="sample_tools"), base_dir=FOLDER)
    b = SOURCE.snapshot(Source(name="py", kind="python", location="sample_tools:ship"), base_dir=FOLDER)
    assert a.digest != b.digest and len(a.digest) == 64


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("no_such_module_here", "no module named 'no_such_module_here'"),
        ("sample_tools:get_membr", r"has no attribute 'get_membr'\. Did you mean 'get_member'\?"),
        ("sample_tools:NOT_CALLABLE", r"NOT_CALLABLE\[0\] is not callable"),
    ],
)
def test_bad_locations(location: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        _tools(location)


def test_import_failure_is_a_spec_error(tmp_path: Path) -> None:
    (tmp_path / "broken_tools_mod.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    source = Source(name="py", kind="python", location="broken_tools_mod")
    snapshot = SOURCE.snapshot(source, base_dir=tmp_path)
    with pytest.raises(SpecError, match="importing 'broken_tools_mod' failed: RuntimeError: boom"):
        SOURCE.tools(snapshot)

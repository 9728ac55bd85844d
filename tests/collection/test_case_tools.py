"""Which tool names a case writes, and which sources keep validate from checking them."""

from __future__ import annotations

from pathlib import Path

from collection.helpers import DEMO_SPEC, config
from qlab.collection.case_tools import check_tool_names, named_tools, not_local
from qlab.project.build_case import build_case
from qlab.project.model import Origin, Source, Suite


def _case(data: dict[str, object]) -> object:
    return build_case(data, suite=Suite("s", "execute", ()), file="c.yaml", origin=Origin("c.yaml", 1, 1),
                      assertion_origins=[])  # fmt: skip


def test_every_place_a_case_names_a_tool() -> None:
    case = _case(
        {
            "id": "a",
            "query": "q",
            "expected_target": "t1",
            "llm_target": "what an LLM said",  # not a claim about the collection: not checked
            "expected_plan_tools": ["t2", "t3"],
            "assertions": [
                {"type": "top_1_is", "tool": "t4"},
                {"type": "selected_target", "equals": "t5"},
                {"type": "plan_tools_equal", "tools": ["t6"]},
                {"type": "http_status", "in": [200]},
            ],
            "cleanup": [{"tool": "t7"}, {"method": "DELETE", "path": "/x"}],
        }
    )
    assert [(".".join(map(str, at)), name) for at, name in named_tools(case)] == [  # type: ignore[arg-type]
        ("expected_target", "t1"),
        ("expected_plan_tools.0", "t2"),
        ("expected_plan_tools.1", "t3"),
        ("assertions.0.tool", "t4"),
        ("assertions.1.equals", "t5"),
        ("assertions.2.tools.0", "t6"),
        ("cleanup.0.tool", "t7"),
    ]


def test_only_local_files_are_read(tmp_path: Path) -> None:
    local = [Source("a", "openapi", str(DEMO_SPEC)), Source("m", "mcp", "tools.json")]
    assert not_local(config(tmp_path, local)) == ""
    assert not_local(config(tmp_path, [Source("m", "mcp", None, command="server")])) == (
        "source 'm' is a live MCP server, which validate does not start"
    )
    assert "is a Python module" in not_local(config(tmp_path, [Source("p", "python", "pkg.tools")]))


def test_a_spec_that_cannot_be_built_is_reported_as_not_checked(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("openapi: 3.0.3\npaths: [\n")
    checked = check_tool_names(
        config(tmp_path, [Source("a", "openapi", "bad.yaml")]),
        [_case({"id": "a", "query": "q", "expected_target": "x"})],
    )  # type: ignore[list-item]
    assert checked.skipped.startswith("the collection could not be built: ") and not checked.diagnostics

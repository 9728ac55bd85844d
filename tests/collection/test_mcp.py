"""MCP tools → Tools: saved tools/list results in their three shapes, annotation defaults, and a real server
(npm @modelcontextprotocol/server-everything) started over stdio through the official SDK."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from qlab.collection.mcp import SOURCE, mutation_of
from qlab.collection.model import MutationClass
from qlab.contracts.errors import SpecError
from qlab.project.model import Origin, Source

EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "title": "Weather now",
        "description": "Current weather.\nFor one city.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name", "examples": ["Paris"]},
                "units": {"$ref": "#/$defs/Units"},
            },
            "required": ["city"],
            "$defs": {"Units": {"type": "string", "enum": ["metric", "imperial"]}},
        },
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "wipe", "description": "Delete everything", "inputSchema": {"type": "object"}},
    {
        "name": "save",
        "description": "Save a note",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"destructiveHint": False, "idempotentHint": True},
    },
]


def _read(tmp_path: Path, data: Any, name: str = "tools.json") -> list[Any]:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    source = Source(name="weather", kind="mcp", location=name)
    return list(SOURCE.tools(SOURCE.snapshot(source, base_dir=tmp_path)).tools)


@pytest.mark.parametrize(
    "shape",
    [{"tools": TOOLS}, TOOLS, {"jsonrpc": "2.0", "id": 1, "result": {"tools": TOOLS}}],
    ids=["result", "bare-list", "json-rpc"],
)
def test_saved_tools_list_shapes(tmp_path: Path, shape: Any) -> None:
    tools = _read(tmp_path, shape)
    assert [t.id for t in tools] == ["get_weather", "wipe", "save"]
    weather = tools[0]
    assert (weather.kind, weather.family, weather.summary) == ("mcp", "weather", "Weather now")
    assert weather.description == "Current weather.\nFor one city."
    assert [(p.name, p.location, p.required) for p in weather.parameters] == [
        ("city", "argument", True),
        ("units", "argument", False),
    ]
    assert weather.parameters[1].schema == {
        "type": "string",
        "enum": ["metric", "imperial"],
    }  # $defs resolved
    assert weather.examples == {"city": "Paris"}
    assert weather.responses["result"]["properties"]["temperature"] == {"type": "number"}
    assert tools[1].summary == "Delete everything"


def test_annotations_follow_the_mcp_defaults() -> None:
    assert mutation_of({"readOnlyHint": True}) == (MutationClass.READ_ONLY, True)
    assert mutation_of({}) == (MutationClass.DESTRUCTIVE, False)  # destructiveHint defaults to true
    assert mutation_of({"readOnlyHint": False}) == (MutationClass.DESTRUCTIVE, False)
    assert mutation_of({"destructiveHint": False}) == (MutationClass.MUTATING, False)
    assert mutation_of({"destructiveHint": False, "idempotentHint": True}) == (MutationClass.MUTATING, True)
    assert mutation_of({"readOnlyHint": True, "destructiveHint": True}) == (MutationClass.READ_ONLY, True)


def test_bad_saved_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"tools\.json:1:1: \$: expected a tools/list result"):
        _read(tmp_path, {"something": "else"})
    with pytest.raises(SpecError, match=r"\$\.tools\[0\]\.name: a tool needs a non-empty `name`"):
        _read(tmp_path, {"tools": [{"description": "nameless"}]})
    with pytest.raises(SpecError, match=r"\$\.result\.tools\[0\]\.inputSchema: `inputSchema` must be"):
        _read(tmp_path, {"result": {"tools": [{"name": "x", "inputSchema": []}]}})


def test_mcp_source_needs_a_file_or_a_command(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="needs a saved tools/list file or a `command`"):
        SOURCE.snapshot(Source(name="m", kind="mcp", location=None), base_dir=tmp_path)


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    source = Source(name="m", kind="mcp", location=None, command="./no-such-mcp-server")
    with pytest.raises(SpecError, match=r"MCP server `\./no-such-mcp-server` could not be read"):
        SOURCE.snapshot(source, base_dir=tmp_path)


@pytest.fixture(scope="module")
def everything() -> Path:
    from servers import ensure_npm, infrastructure

    with infrastructure("the live MCP server"):  # node absent: a skip; npm failing to install it: fails in CI
        return ensure_npm(EVERYTHING, "mcp-server-everything")


@pytest.mark.node
def test_live_server_everything(everything: Path, tmp_path: Path) -> None:
    source = Source(name="everything", kind="mcp", location=None, command=str(everything), args=("stdio",),
                    env={"QLAB_TEST_MCP": "1"})  # fmt: skip
    snapshot = SOURCE.snapshot(source, base_dir=tmp_path)
    again = SOURCE.snapshot(source, base_dir=tmp_path)
    assert snapshot.digest == again.digest  # the same server lists the same tools
    found = SOURCE.tools(snapshot)
    tools = {t.id: t for t in found.tools}
    assert found.info == {"transport": "stdio", "tools": len(tools)}
    assert {"echo", "get-sum", "get-structured-content"} <= set(tools)
    echo = tools["echo"]
    assert echo.mutation is MutationClass.READ_ONLY and echo.family == "everything"
    assert [(p.name, p.required) for p in echo.parameters] == [("message", True)]
    assert echo.parameters[0].schema["type"] == "string" and echo.parameters[0].description
    assert tools["get-structured-content"].responses["result"]["required"] == [
        "temperature",
        "conditions",
        "humidity",
    ]
    assert tools["toggle-simulated-logging"].mutation is MutationClass.MUTATING


def test_live_source_without_the_sdk_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if qlab[mcp] were not installed
    source = Source(name="m", kind="mcp", location=None, command="anything")
    with pytest.raises(SpecError) as caught:
        SOURCE.snapshot(source, base_dir=tmp_path)
    assert str(caught.value).startswith("source 'm':") and "pip install 'qualitylab[mcp]'" in str(
        caught.value
    )


RAW_SERVER = Path(__file__).parent / "fixtures" / "mcp" / "raw_server.py"


def test_a_live_server_without_the_sdk_on_its_side(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    source = Source(name="raw", kind="mcp", location=None, command=sys.executable, args=(str(RAW_SERVER),))
    found = SOURCE.tools(SOURCE.snapshot(source, base_dir=tmp_path))
    assert [t.id for t in found.tools] == ["echo"]
    assert capfd.readouterr().err == ""


def test_a_server_that_writes_a_non_protocol_line_is_a_located_error_never_a_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The MCP SDK logs a whole traceback for a stdout line that is not JSON-RPC, and lists the tools anyway:
    qlab captures the SDK's logging and refuses the source, naming the server, the line and what to do."""
    source = Source(
        name="noisy",
        kind="mcp",
        location=None,
        command=sys.executable,
        args=(str(RAW_SERVER), "--noise", "listening on stdio with key sk-CANARY-mcp-0102"),
        env={"NOISY_API_KEY": "sk-CANARY-mcp-0102"},
        origin=Origin("qlab.yaml", 7, 7),
    )
    with pytest.raises(SpecError) as caught:
        SOURCE.snapshot(source, base_dir=tmp_path)
    message = str(caught.value)
    assert message.startswith("qlab.yaml:7:7: source 'noisy': MCP server `")
    assert (
        "wrote a line to stdout that is not a JSON-RPC message: 'listening on stdio with key [REDACTED]'"
        in message
    )
    assert "send its logs to stderr" in message
    console = capfd.readouterr()
    assert "Traceback" not in console.err + console.out and "sk-CANARY" not in console.err + console.out

"""Text from outside (a spec, a case file, an API's responses) commands nothing in what qlab prints and writes.

A hostile spec and a hostile API on 127.0.0.1 put GitHub workflow commands, in both forms and disguised, and
Markdown/HTML into every field qlab shows: operation ids, summaries, a dangling ``$ref``, case ids and queries,
response bodies and headers. Every command that prints runs on them in process, without and with
``GITHUB_ACTIONS``; the runner's reading of stdout and stderr (``actions_runner``) must find no command but
qlab's own annotations, and run.log none at all. The summary (summary.md, ``$GITHUB_STEP_SUMMARY``,
``qlab report --markdown``) must hold no live image, link, HTML or heading from that text, and the HTML report
must escape it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import gfm
from actions_runner import Command, commands
from qlab.cli import main
from servers import JSONHandler, serving

# what an attacker would print: commands in both forms (disguised too), Markdown and HTML
COMMANDS = [
    "::add-mask::FORGED-mask",
    "::set-output name=decision::FORGED-pass",
    "##[add-mask]FORGED-mask",
    "##[set-output name=decision;]FORGED-pass",
    "##[error]FORGED-error",
    "#\u200b#[add-mask]FORGED-zwsp",
    "\u200b::warning::FORGED-zwsp",
]
MARKUP = [
    "![FORGED-img](http://127.0.0.1:9/pixel.png)",
    "[FORGED-link](http://127.0.0.1:9/phish)",
    "<img src=x onerror=alert(1)>FORGED-html",
    "<a href='http://127.0.0.1:9/'>FORGED-anchor</a>",
    "http://127.0.0.1:9/FORGED-autolink",
    "| FORGED | cell |",
    "`` ` FORGED-tick",
]
ONE_LINE = " ".join([*COMMANDS, *MARKUP])
MANY_LINES = "\n".join([*COMMANDS, "# FORGED-heading", "***", *MARKUP])


def _spec(port: int) -> dict[str, Any]:
    def op(op_id: str, summary: str, path_param: bool = False) -> dict[str, Any]:
        params = (
            [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
            if path_param
            else []
        )
        return {
            "operationId": op_id,
            "summary": summary,
            "description": MANY_LINES,
            "parameters": params,
            "responses": {"200": {"description": ONE_LINE}},
        }

    return {
        "openapi": "3.0.3",
        "info": {"title": ONE_LINE, "version": "1"},
        "servers": [{"url": f"http://127.0.0.1:{port}"}],
        "paths": {
            "/items/{id}": {"get": op("getItem", f"get item {ONE_LINE}", path_param=True)},
            "/notes": {"get": op("listNotes", f"list notes ##[add-mask]FORGED-summary {MANY_LINES}")},
            "/forged": {"get": op("##[add-mask]FORGED-op", "remove notes")},
        },
    }


def _dangling(port: int) -> dict[str, Any]:
    """The spec with a ``$ref`` that points to nothing: the error line quotes it."""
    return {**_spec(port), "paths": {"/x": {"$ref": "#/##[add-mask]FORGED-ref"}}}


class _Hostile(JSONHandler):
    def do_GET(self) -> None:
        if self.path == "/dangling.json":
            data: Any = _dangling(self.server.server_address[1])
        else:
            data = {"name": MANY_LINES, "note": ONE_LINE, "id": "##[add-mask]FORGED-id"}
        status = 500 if self.path == "/notes" else 200
        self.send_json(status, data, {"X-Note": "##[add-mask]FORGED-header"})


@pytest.fixture(scope="module")
def hostile_api() -> Iterator[int]:
    with serving(_Hostile) as port:
        yield port


CONFIG = """\
version: 1
project: hostile
collection:
  sources:
    - name: api
      openapi: api.json
environments:
  dev:
    base_url: http://127.0.0.1:{port}
    allowed_hosts: [127.0.0.1]
suites:
  search_core: {{mode: search, cases: [cases/search.yaml]}}
  reads: {{mode: execute, cases: [cases/reads.yaml], environment: dev}}
gates:
  - {{name: build, stage: build, stop_if: [{{schema_coverage_below: 0.1}}]}}
  - {{name: search, stage: search, suites: [search_core]}}
  - {{name: execute, stage: execute, suites: [reads]}}
promotion:
  search_change: {{suites: [search_core], require: [metric_not_worse]}}
output:
  dir: out
"""


def _project(folder: Path, port: int) -> Path:
    (folder / "api.json").write_text(json.dumps(_spec(port)), encoding="utf-8")
    (folder / "cases").mkdir()
    search = [
        {"id": "s-1", "query": f"get item {ONE_LINE}", "expected_target": "getItem"},
        {"id": "s-2", "query": f"find {ONE_LINE}", "expected_target": "listNotes"},
    ]
    reads = [
        {
            "id": "r-1",
            "query": "get item one",
            "expected_target": "getItem",
            "provided_entities": {"id": "1"},
            "assertions": [{"type": "json_path_equals", "path": "$.name", "equals": "expected"}],
        },
        {"id": "r-2", "query": "list notes", "expected_target": "listNotes"},
    ]
    (folder / "cases" / "search.yaml").write_text(json.dumps(search), encoding="utf-8")
    (folder / "cases" / "reads.yaml").write_text(json.dumps(reads), encoding="utf-8")
    config = folder / "qlab.yaml"
    config.write_text(CONFIG.format(port=port), encoding="utf-8")
    return config


class _Elements(HTMLParser):
    """The HTML report's elements: ``forged`` lists any that outside text made (an image, a link to the hostile
    host, an event handler attribute)."""

    def __init__(self) -> None:
        super().__init__()
        self.forged: list[str] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = " ".join(f"{k}={v}" for k, v in attrs)
        if tag == "img" or "127.0.0.1:9" in values or "onerror" in values:
            self.forged.append(f"<{tag} {values}>")

    def handle_data(self, data: str) -> None:
        self.text += data


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out + captured.err


OWN_LINKS = ("result.json", "junit.xml", "summary.md")
OWN = {"error", "warning", "notice"}  # qlab's annotations; the stop-commands fence is checked apart


def _forged(printed: str) -> list[Command]:
    """The commands in ``printed`` that qlab did not write: any old-form command, any other name than qlab's,
    an annotation with a property qlab does not set or a title not its own."""
    found = commands(printed)
    fences = [c for c in found if c.form == "::" and c.name == "stop-commands"]
    tokens = {c.data for c in fences}
    out = []
    for command in found:
        if command in fences or (command.form == "::" and command.name in tokens):
            continue
        keys = dict(p.split("=", 1) for p in command.properties.split(",") if "=" in p)
        if (
            command.form != "::"
            or command.name not in OWN
            or not set(keys) <= {"file", "line", "col", "title"}
            or not keys.get("title", "").startswith("qlab")
        ):
            out.append(command)
    return out


@pytest.mark.parametrize("actions", [False, True], ids=["plain", "github-actions"])
def test_no_outside_text_commands_the_runner(
    actions: bool,
    hostile_api: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _project(tmp_path, hostile_api)
    monkeypatch.chdir(tmp_path)
    summary_file = tmp_path / "step-summary.md"
    if actions:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
        monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs.txt"))
    result = tmp_path / "out" / "result.json"
    dangling = tmp_path / "dangling.json"
    dangling.write_text(json.dumps(_dangling(hostile_api)), encoding="utf-8")
    bad_case = tmp_path / "bad"
    bad_case.mkdir()
    (bad_case / "qlab.yaml").write_text(CONFIG.format(port=hostile_api), encoding="utf-8")
    (bad_case / "api.json").write_text(json.dumps(_spec(hostile_api)), encoding="utf-8")
    (bad_case / "cases").mkdir()
    (bad_case / "cases" / "search.yaml").write_text(
        json.dumps([{"id": "s-1", "query": ["##[add-mask]FORGED-value"], "expected_target": "x"}]),
        encoding="utf-8",
    )
    (bad_case / "cases" / "reads.yaml").write_text("[]", encoding="utf-8")
    runs: list[tuple[list[str], set[int]]] = [
        (["validate", "--config", str(config)], {0}),
        (["validate", "--config", str(bad_case / "qlab.yaml")], {2}),
        (["build", "--config", str(config)], {0, 1}),
        (["build", "--config", str(config), "--json"], {0, 1}),
        (["search", f"get item {ONE_LINE}", "--config", str(config)], {0}),
        (["search", "notes", "--config", str(config), "--explain"], {0}),
        (["search", "item", "--spec", str(dangling)], {2}),
        (["search", "item", "--spec", f"http://127.0.0.1:{hostile_api}/dangling.json"], {2}),
        (["plan", "get item", "--entity", "id=##[add-mask]FORGED-entity", "--config", str(config)], {0, 1}),
        (["run", "--config", str(config)], {1, 2}),
        (["report", str(result), "--markdown", "-"], {0}),
        (["report", str(result), "--html", str(tmp_path / "report.html")], {0}),
        (["learn", "signals", "--config", str(config), "--result", str(result)], {0}),
        (["propose-case", "--config", str(config), "--result", str(result), "--case", "r-1"], {0}),
        (
            [
                "promote",
                "--config",
                str(config),
                "--baseline",
                str(result),
                "--candidate",
                str(result),
                "--change",
                "search_change",
            ],
            {0},
        ),
    ]
    printed: dict[str, str] = {}
    for argv, codes in runs:
        code, text = _cli(argv, capsys)
        assert code in codes, f"qlab {' '.join(argv)} exited {code}:\n{text}"
        assert not _forged(text), f"qlab {' '.join(argv)}:\n{text}"
        printed[" ".join(argv)] = text
    # the hostile text did reach the console, made inert and not dropped
    assert "FORGED-op" in printed[f"build --config {config}"]
    assert "FORGED-op" in printed[f"search notes --config {config} --explain"]
    assert "FORGED-ref" in printed[f"search item --spec {dangling}"]
    assert "FORGED-ref" in printed[f"search item --spec http://127.0.0.1:{hostile_api}/dangling.json"]
    assert "FORGED-mask" in printed[f"run --config {config}"]
    run_log = (tmp_path / "out" / "run.log").read_text(encoding="utf-8")
    assert "FORGED" in run_log and commands(run_log) == []
    if actions:
        assert "::error " in printed[f"run --config {config}"]  # qlab's own annotations still act
    # the summary, wherever it goes, is inert as GitHub renders it; the HTML report escapes
    summaries = [(tmp_path / "out" / "summary.md").read_text(encoding="utf-8")]
    summaries.append(printed[f"report {result} --markdown -"])
    if actions:
        summaries.append(summary_file.read_text(encoding="utf-8"))
    for summary in summaries:
        assert "FORGED" in summary and gfm.live(summary, "FORGED", own_links=OWN_LINKS) == [], summary
    page = _Elements()
    page.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert "FORGED" in page.text and not page.forged

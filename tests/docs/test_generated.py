"""The generated reference pages: no drift from their sources, valid examples, working links."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from qlab import docs
from qlab.contracts import errors, reasons
from qlab.contracts.resources import load_schema
from qlab.docs import cases_doc, exit_codes_doc, reasons_doc, schema_md
from qlab.docs.__main__ import main as docs_main
from qlab.engine import types as engine_types
from qlab.execute import assertions

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"```(yaml|json)\n(.*?)```", re.S)


def _blocks(page: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(page) if kind == lang]


@pytest.mark.parametrize("name", sorted(docs.PAGES))
def test_committed_page_matches_its_generator(name: str) -> None:
    file_name = docs.PAGES[name][0]
    committed = (DOCS / file_name).read_text(encoding="utf-8")
    assert committed == docs.generate(name), (
        f"docs/{file_name} is out of date: run `python -m qlab.docs --write docs` and commit the result"
    )


def test_check_mode_reports_drift_and_write_fixes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs.write_all(tmp_path)
    assert docs_main(["--check", str(tmp_path)]) == 0
    (tmp_path / "config.md").write_text("# stale\n", encoding="utf-8")
    assert docs_main(["--check", str(tmp_path)]) == 1
    assert "config.md: out of date" in capsys.readouterr().err
    assert docs.drifted(tmp_path) == ["config.md"]


def test_the_shipped_case_schema_is_generated_from_the_assertion_registries() -> None:
    assert docs.schemas_drifted(ROOT / "schemas") == [], (
        "schemas/case.schema.json is out of date: run `python -m qlab.docs --write docs --schemas schemas`"
    )


def test_a_type_added_to_the_registry_is_a_branch_of_the_generated_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Even:
        name, stage, needs_json = "even_status", "execute", False
        schema = {"description": "the status is even.", "properties": {"note": {"type": "string"}}}

    shutil.copy(ROOT / "schemas" / "case.schema.json", tmp_path / "case.schema.json")
    monkeypatch.setitem(assertions.ASSERTIONS, "even_status", Even())
    assert docs.schemas_drifted(tmp_path) == ["case.schema.json"]
    assert docs_main(["--check", str(DOCS), "--schemas", str(tmp_path)]) == 1
    assert "case.schema.json: out of date" in capsys.readouterr().err
    docs.write_schemas(tmp_path)
    schema = json.loads((tmp_path / "case.schema.json").read_text(encoding="utf-8"))
    assert schema["definitions"]["assertion"]["oneOf"][-1] == {"$ref": "#/definitions/assertion_even_status"}
    assert schema["definitions"]["assertion_even_status"]["description"] == "execute: the status is even."
    assert docs.schemas_drifted(tmp_path) == []


# --------------------------------------------------------------------------------------------- config.md


def _schema_keys(schema: Any, out: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, sub in (schema.get("properties") or {}).items():
            out.add(key)
            _schema_keys(sub, out)
        for value in schema.values():
            if isinstance(value, (dict, list)):
                _schema_keys(value, out)
    elif isinstance(schema, list):
        for item in schema:
            _schema_keys(item, out)
    return out


def test_config_reference_documents_every_key_of_the_schema() -> None:
    page = docs.generate("config")
    missing = sorted(
        k for k in _schema_keys(load_schema("config"), set()) if f"`{k}`" not in page and k != "$schema"
    )
    assert missing == []


def test_config_examples_validate_against_the_schema() -> None:
    blocks = [yaml.safe_load(b) for b in _blocks(docs.generate("config"), "yaml")]
    configs = [b for b in blocks if isinstance(b, dict) and "version" in b]
    assert configs, "the page shows at least one complete qlab.yaml"
    for config in configs:
        jsonschema.Draft7Validator(load_schema("config")).validate(config)


# --------------------------------------------------------------------------------------------- cases.md


def test_case_examples_validate_against_the_schema() -> None:
    schema = load_schema("case")
    page = docs.generate("cases")
    cases = [yaml.safe_load(b) for b in _blocks(page, "yaml")]
    cases = [c for c in cases if isinstance(c, dict) and "id" in c]
    assert len(cases) == 4  # the seed's search, plan and execute shapes + a mutating case
    for case in cases:
        jsonschema.Draft7Validator(schema).validate(case)


def test_every_assertion_type_has_a_section_and_a_valid_example() -> None:
    schema = load_schema("case")
    page = docs.generate("cases")
    validator = jsonschema.Draft7Validator(schema)
    definitions = cases_doc.assertion_definitions(schema)
    assert len(definitions) >= 18
    for name, definition in definitions.items():
        assert f"### `{name}`" in page
        example = cases_doc.assertion_example(name, definition)
        case = {"id": "x", "query": "q", "assertions": [example]}
        errors_found = [e.message for e in validator.iter_errors(case)]
        assert errors_found == [], (name, errors_found)


def test_other_file_examples_validate_against_their_definitions() -> None:
    schema = load_schema("case")
    page = docs.generate("cases")
    trigger, golden = (json.loads(b) for b in _blocks(page, "json"))
    aliases = yaml.safe_load(_blocks(page, "yaml")[-1])
    for name, instance in (("trigger_cases", trigger), ("golden_cases", golden), ("aliases", aliases)):
        sub = {**schema["definitions"][name], "definitions": schema["definitions"]}
        jsonschema.Draft7Validator(sub).validate(instance)


# --------------------------------------------------------------------------------------------- reasons.md, exit codes


def test_every_reason_code_is_documented_with_stage_meaning_and_hint() -> None:
    page = docs.generate("reasons")
    for reason in reasons.REASONS.values():
        section = page.split(f"### {reason.code}\n", 1)[1].split("###", 1)[0]
        assert f"**Stage:** {reason.stage}" in section
        assert reason.meaning in section
        assert reason.hint in section


def test_every_selector_reason_code_has_a_meaning() -> None:
    codes = {v for k, v in vars(engine_types).items() if k.isupper() and isinstance(v, str)}
    assert codes == set(reasons_doc.SELECTOR_CODES)
    assert all(reasons_doc.SELECTOR_CODES.values())


def test_every_exit_code_has_a_meaning() -> None:
    names = {name for name in vars(errors) if name.startswith("EXIT_")}
    assert names == set(exit_codes_doc.MEANINGS)
    page = docs.generate("exit-codes")
    for value in (0, 1, 2, 3, 130):
        assert f"| **{value}** |" in page
    assert "| `ConfigError` | 2 |" in page


# --------------------------------------------------------------------------------------------- links and rendering


def _anchors(page: str) -> set[str]:
    explicit = set(re.findall(r'<a id="([^"]+)"></a>', page))
    headings = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", page, re.M)
    }
    return explicit | headings


@pytest.mark.parametrize("name", sorted(docs.PAGES))
def test_every_in_page_link_has_a_target(name: str) -> None:
    page = docs.generate(name)
    links = set(re.findall(r"\]\(#([^)]+)\)", page))
    assert links - _anchors(page) == set()


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"$ref": "#/definitions/suite"}, "[suite](#def-suite)"),
        ({"enum": ["a", "b"]}, "one of `a`, `b`"),
        ({"type": "array", "items": {"type": "string"}}, "list of string"),
        ({"type": ["string", "array"], "items": {"type": "integer"}}, "string or list of integer"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "map of name → string"),
        ({"const": 1}, "constant `1`"),
        ({"oneOf": [{"type": "string", "title": "a name"}, {"type": "object"}]}, "string (a name) or object"),
        ({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, "object"),
        ({}, "any value"),
    ],
)
def test_type_of(schema: dict[str, Any], expected: str) -> None:
    assert schema_md.type_of(schema) == expected


def test_enum_meanings_split_inline_descriptions_on_whole_words() -> None:
    intro, meanings = schema_md.enum_meanings(
        "A metric. assertion_pass_rate: share of assertions; pass_rate: share of cases",
        ["pass_rate", "assertion_pass_rate"],
    )
    assert intro == "A metric."
    assert meanings == {"assertion_pass_rate": "share of assertions", "pass_rate": "share of cases"}
    assert schema_md.enum_meanings("Nothing described.", ["a", "b"]) == ("Nothing described.", {})


def test_table_cells_escape_pipes() -> None:
    assert schema_md.cell("a | b\nc") == "a \\| b c"

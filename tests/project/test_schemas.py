"""The JSON Schemas themselves: valid draft-07, stable ids, a description on every property, in step with the
model's dataclasses; and ``schemas.validate`` on real data."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from qlab.contracts.resources import load_schema
from qlab.project import model
from qlab.project.schemas import validate

ROOT = Path(__file__).resolve().parents[2]
MINE = {
    "config": "https://qlab.dev/schemas/qlab.schema.json",
    "case": "https://qlab.dev/schemas/case.schema.json",
}


@pytest.mark.parametrize("name", sorted(MINE))
def test_valid_draft_07_with_a_stable_id(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"] == MINE[name]
    jsonschema.Draft7Validator.check_schema(schema)  # raises SchemaError on a bad schema


def _properties(node: Any, where: str, root: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            yield f"{where}/properties/{key}", value
        for key, value in node.items():
            yield from _properties(value, f"{where}/{key}", root)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _properties(value, f"{where}/{index}", root)


def _described(prop: dict[str, Any], root: dict[str, Any]) -> bool:
    if "description" in prop:
        return True
    ref = prop.get("$ref", "")
    return ref.startswith("#/definitions/") and "description" in root["definitions"][ref.rsplit("/", 1)[1]]


@pytest.mark.parametrize("name", sorted(MINE))
def test_every_property_has_a_description(name: str) -> None:
    schema = load_schema(name)
    missing = [where for where, prop in _properties(schema, "#", schema) if not _described(prop, schema)]
    assert missing == []
    assert sum(1 for _ in _properties(schema, "#", schema)) > 60


@pytest.mark.parametrize("path", sorted((ROOT / "schemas").glob("*.schema.json")), ids=lambda p: p.name)
def test_every_shipped_schema_describes_every_property(path: Path) -> None:
    """Issue 2: "a `description` on every property", in every schema qlab ships, not only its own two."""
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"] == f"https://qlab.dev/schemas/{path.name}"
    missing = [where for where, prop in _properties(schema, "#", schema) if not _described(prop, schema)]
    assert missing == []


# schema definition -> (dataclass, {schema key: field name} where they differ)
CONFIG_MODELS: dict[str, tuple[type, dict[str, str]]] = {
    "auth_profile": (model.AuthProfile, {}),
    "llm": (model.LLMConfig, {}),
    "engine": (model.EngineConfig, {}),
    "server": (model.ServerConfig, {}),
    "environment": (model.Environment, {}),
    "suite": (model.Suite, {}),
    "gate": (model.Gate, {}),
    "guard": (model.Guard, {}),
    "promotion_rule": (model.PromotionRule, {}),
    "release_skill": (model.ReleaseSkill, {"triggers": "trigger_phrases"}),  # triggers: phrases, step_types
}


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("definition", sorted(CONFIG_MODELS))
def test_config_schema_matches_the_model(definition: str) -> None:
    cls, renames = CONFIG_MODELS[definition]
    keys = set(load_schema("config")["definitions"][definition]["properties"])
    assert {renames.get(k, k) for k in keys} <= _fields(cls)


def test_top_level_sections_match_the_config_model() -> None:
    schema = load_schema("config")
    keys = set(schema["properties"]) - {"$schema"}
    assert keys == _fields(model.Config) - {
        "path",
        "digest",
        "shard_digest",
        "sensitive_fields",
        "variables",
    }  # derived
    collection = set(schema["properties"]["collection"]["properties"])
    assert collection == {
        "sources",
        "aliases",
        "auth",
        "cache_dir",
    }  # aliases -> aliases_file, auth -> auth_profile
    for section, cls in (
        ("budget", model.Budget),
        ("learning", model.LearningConfig),
        ("output", model.OutputConfig),
    ):
        assert set(schema["properties"][section]["properties"]) == _fields(cls)


def test_case_schema_matches_the_case_model() -> None:
    case = load_schema("case")["definitions"]["case"]["properties"]
    assert set(case) - {"$schema"} == _fields(model.Case) - {"suite", "file", "origin", "raw"}
    capture = load_schema("case")["definitions"]["capture"]["properties"]
    assert set(capture) == _fields(model.Capture)
    cleanup = load_schema("case")["definitions"]["cleanup_step"]["properties"]
    assert set(cleanup) == _fields(model.CleanupStep)


def test_case_schema_enums_match_the_model_literals() -> None:
    schema = load_schema("config")["definitions"]
    assert schema["suite"]["properties"]["category"]["enum"] == list(model.CATEGORIES)
    assert schema["suite"]["properties"]["cadence"]["enum"] == list(model.CADENCES)
    assert schema["gate"]["properties"]["stage"]["enum"] == list(model.STAGES)


def test_every_assertion_type_is_a_discriminated_branch() -> None:
    definitions = load_schema("case")["definitions"]
    branches = [definitions[ref["$ref"].rsplit("/", 1)[1]] for ref in definitions["assertion"]["oneOf"]]
    names = [b["properties"]["type"]["const"] for b in branches]
    assert names == [
        "top_k_contains", "top_1_is", "selected_target", "not_overridden", "plan_contains_tool", "plan_tools_equal",
        "plan_status", "no_user_input_slots", "http_status", "json_path_exists", "json_path_equals",
        "json_path_matches", "json_path_count", "response_schema", "header_present", "header_equals",
        "latency_ms_below", "body_contains",
    ]  # fmt: skip
    assert all(b["additionalProperties"] is False for b in branches)


def test_seed_000_case_shapes_are_valid() -> None:
    seed = [
        {"id": "member-search-001", "mode": "search", "query": "Find member delivery detail",
         "expected_target": "getMemberDeliveryDetail", "expected_top_k": 8,
         "assertions": [{"type": "top_k_contains", "tool": "getMemberDeliveryDetail", "k": 8}]},
        {"id": "member-plan-001", "mode": "plan", "query": "Find the member delivery detail",
         "expected_target": "getMemberDeliveryDetail", "provided_entities": {"memberNo": "sample-member"},
         "assertions": [{"type": "selected_target", "equals": "getMemberDeliveryDetail"},
                        {"type": "plan_contains_tool", "tool": "getMemberDeliveryDetail"}], "timeout_sec": 30},
        {"id": "member-execute-001", "mode": "execute", "query": "Find the member delivery detail",
         "expected_target": "getMemberDeliveryDetail", "provided_entities": {"memberNo": "sample-member"},
         "mutation_safety": "read_only",
         "assertions": [{"type": "http_status", "in": [200]}, {"type": "json_path_exists", "path": "$.data"}],
         "timeout_sec": 30},
    ]  # fmt: skip
    assert validate(seed, "case") == []
    # fields are additive: a search case stays valid with plan and execute fields added
    additive = {**seed[0], **{k: v for k, v in seed[2].items() if k not in ("id", "mode")}}
    assert validate(additive, "case", definition="case") == []


def test_release_files_have_their_own_definitions() -> None:
    trigger = json.loads((ROOT / "gates/release/trigger-cases.json").read_text())
    golden = json.loads((ROOT / "gates/release/golden-cases.json").read_text())
    assert validate(trigger, "case", definition="trigger_cases") == []
    assert validate(golden, "case", definition="golden_cases") == []
    (issue,) = validate([{"query": "x"}], "case", definition="trigger_cases")
    assert (issue.keyword, issue.path) == ("required", (0,))


def test_validate_reports_absolute_paths_with_a_prefix() -> None:
    (issue,) = validate({"id": "x", "query": "q", "tags": "a"}, "case", definition="case", prefix=(3,))
    assert (issue.keyword, issue.path, issue.instance) == ("type", (3, "tags"), "a")


def test_property_name_issues_point_at_the_key() -> None:
    config = {"version": 1, "project": "p", "collection": {"sources": [{"openapi": "x.yaml"}]},
              "suites": {"s": {"mode": "search", "cases": ["*.yaml"]}},
              "gates": [{"stage": "search", "thresholds": {"hit_at_kk": ">= 1"}}]}  # fmt: skip
    (issue,) = validate(config, "config")
    assert issue.is_key
    assert issue.path == ("gates", 0, "thresholds", "hit_at_kk")


def test_unknown_definition() -> None:
    with pytest.raises(KeyError):
        validate({}, "case", definition="nope")


def _case_items() -> Iterator[Any]:
    from qlab.contracts.errors import ConfigError
    from qlab.project.files import read_document

    folders = [ROOT / "gates", ROOT / "tests" / "fixtures"]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".yaml", ".json", ".jsonl") or "release" in path.parts:
                continue
            try:
                _, doc = read_document(path, display=path.name)
            except ConfigError:
                continue
            items = doc.data if isinstance(doc.data, list) else [doc.data]
            yield from (
                item for item in items if isinstance(item, dict) and ("query" in item or "id" in item)
            )


def test_the_fast_case_path_words_issues_exactly_like_the_full_schema() -> None:
    """``validate_case`` dispatches assertions on their type; its findings must equal the full oneOf's."""
    from qlab.project.messages import explain_all
    from qlab.project.schemas import validate_case

    checked = 0
    for item in _case_items():
        fast = sorted(explain_all(validate_case(item, prefix=(2,))))
        full = sorted(explain_all(validate(item, "case", definition="case", prefix=(2,))))
        assert fast == full, item
        checked += 1
    assert checked > 80

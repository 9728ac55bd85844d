"""``qlab plan`` in-process: the seed's example as text and JSON, --llm-target, entity parsing, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .engine_project import DEMO_SPEC, project, run


def test_seed_example_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path)
    code, out, err = run(
        [
            "plan",
            "Find the member delivery detail",
            "--entity",
            "memberNo=M-1001",
            "--llm-target",
            "getMemberDeliveryList",
            "--config",
            str(config),
        ],
        capsys,
    )
    assert code == 0, out + err
    lines = out.splitlines()
    assert "llm target:      getMemberDeliveryList" in lines
    assert "selected target: getMemberDeliveryDetail  (overrode the LLM)" in lines
    assert "reason codes:    llm_target_overridden, selected_by_strong_evidence" in lines
    assert any(line.startswith("plan plan-") and line.endswith(": synthesized") for line in lines)
    assert '  0. getMemberDeliveryList(memberNo="M-1001")' in lines
    assert (
        '  1. getMemberDeliveryDetail(memberNo="M-1001", deliveryId <- step 0 $.data[0].deliveryId)' in lines
    )
    assert "diagnostics:" in lines


def test_json_and_needs_input_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "plan",
            "reschedule a delivery",
            "--entity",
            "deliveryId=D-5001",
            "--json",
            "--spec",
            str(DEMO_SPEC),
        ],
        capsys,
    )
    assert code == 1
    data = json.loads(out)
    assert set(data) == {"query", "entities", "search", "target_selector", "plan"}
    assert data["target_selector"]["selected_target"] == "rescheduleDelivery"
    assert data["plan"]["status"] == "needs_input"
    assert data["plan"]["user_input_slots"][0]["parameter"] == "date"
    assert data["plan"]["reason"] == "required_fields_unsatisfied"


def test_entity_values_are_json_when_they_parse(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "plan",
            "place an order for a member",
            "--entity",
            "memberNo=M-1001",
            "--entity",
            'items=["SKU-1", "SKU-2"]',
            "--json",
            "--spec",
            str(DEMO_SPEC),
        ],
        capsys,
    )
    data = json.loads(out)
    assert data["entities"] == {"memberNo": "M-1001", "items": ["SKU-1", "SKU-2"]}
    assert code == 0 and data["plan"]["steps"][-1]["arguments"]["items"] == ["SKU-1", "SKU-2"]


def test_no_target_and_bad_entity(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["plan", "the of and", "--spec", str(DEMO_SPEC)], capsys)
    assert code == 1
    assert "selected target: -" in out and "no_target" in out
    code, _, err = run(["plan", "x", "--entity", "novalue", "--spec", str(DEMO_SPEC)], capsys)
    assert code == 2 and "is not name=value" in err


def test_the_llm_endpoint_of_qlab_yaml_proposes_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine.llm in qlab.yaml -> the registry's LLM client -> the selector (the stub stands in for a paid
    OpenAI-compatible service; see tests/engine/test_llm.py)."""
    from engine.stub_servers import serve

    def chat(path: str, headers: dict[str, str], body: object) -> tuple[int, object]:
        usage = {"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53}
        return 200, {"choices": [{"message": {"content": "getMemberDeliveryList"}}], "usage": usage}

    monkeypatch.setenv("QLAB_TEST_LLM_KEY", "sk-local")
    with serve(chat) as (url, seen):
        engine = (
            "engine:\n  type: builtin\n  llm:\n"
            f"    base_url: {url}/v1\n    model: stub\n    api_key_env: QLAB_TEST_LLM_KEY\n"
            "    cache_dir: llm-cache\n    price_per_1k_input: 1.0\n"
        )
        config = project(tmp_path, engine=engine)
        args = [
            "plan",
            "Find the member delivery detail",
            "--entity",
            "memberNo=M-1001",
            "--json",
            "--config",
            str(config),
        ]
        code, out, err = run(args, capsys)
        assert code == 0, out + err
        block = json.loads(out)["target_selector"]
        assert block["llm_target"] == "getMemberDeliveryList"
        assert block["selected_target"] == "getMemberDeliveryDetail" and block["overrode_llm"] is True
        assert block["llm_usage"]["total_tokens"] == 53 and block["llm_usage"]["cost_usd"] == 0.05
        code, out, _ = run(args, capsys)
        assert json.loads(out)["target_selector"]["llm_usage"]["cached"] is True
        assert len(seen) == 1
        assert seen[0][1]["authorization"] == "Bearer sk-local"
    assert list((tmp_path / "llm-cache").rglob("*.json"))

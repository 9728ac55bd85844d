"""Hand-written result artifacts for the governance tests (the documented ``result.json`` shape)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from qlab.contracts.results import to_json
from qlab.engine.types import SearchRow


def search_case(
    case_id: str,
    *,
    suite: str = "search_core",
    rank: int | None = 1,
    top: Iterable[str] = (),
    top_k: int = 5,
    **extra: Any,
) -> dict[str, Any]:
    """A search case: hit at ``rank`` (passed) or a miss (failed with expected_target_absent)."""
    rows = tuple(SearchRow(t, i + 1, 10.0 - i) for i, t in enumerate(top))
    case: dict[str, Any] = {
        "case_id": case_id,
        "suite": suite,
        "mode": "search",
        "status": "passed" if rank is not None else "failed",
        "latency_ms": {"search": 5.0},
        "search": {"hit": rank is not None, "hit_rank": rank, "top_k": top_k, "rows": rows},
        "file": f"gates/{suite}/{case_id}.yaml",
        "line": 1,
    }
    if rank is None:
        case["failure"] = {
            "stage": "search",
            "reason": "expected_target_absent",
            "message": "not in the Top-K",
        }
    case.update(extra)
    return case


def plan_case(
    case_id: str,
    *,
    suite: str = "plan_e2e",
    selected: str = "getMemberDeliveryDetail",
    correct: bool = True,
    llm: str | None = None,
    tools: Iterable[str] = ("getMemberDeliveryDetail",),
    **extra: Any,
) -> dict[str, Any]:
    case: dict[str, Any] = {
        "case_id": case_id,
        "suite": suite,
        "mode": "plan",
        "status": "passed" if correct else "failed",
        "latency_ms": {"search": 5.0, "target_selection": 1.0, "plan": 10.0},
        "search": {"hit": True, "hit_rank": 1, "top_k": 8, "rows": []},
        "target_selector": {
            "llm_target": llm,
            "selected_target": selected,
            "overrode_llm": llm is not None and llm != selected,
            "reason_codes": ["llm_target_overridden"]
            if llm is not None and llm != selected
            else ["selected_top_rank"],
        },
        "plan": {
            "plan_id": f"p-{case_id}",
            "status": "synthesized",
            "tools": list(tools),
            "steps": [],
            "user_input_slots": [],
        },
        "file": f"gates/{suite}/{case_id}.yaml",
        "line": 3,
    }
    if not correct:
        case["failure"] = {
            "stage": "select",
            "reason": "wrong_target_selected",
            "message": "expected another",
        }
    case.update(extra)
    return case


def artifact(
    cases: list[dict[str, Any]],
    *,
    run_id: str = "run-1",
    suites: dict[str, dict[str, Any]] | None = None,
    collection: str = "sha256:collection-a",
    model: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A result artifact around ``cases``; suites default to each case's suite (required, category flow)."""
    if suites is None:
        suites = {}
        for case in cases:
            suites.setdefault(
                case["suite"],
                {"mode": case["mode"], "category": "flow", "required": True, "metrics": {}, "counts": {}},
            )
    out: dict[str, Any] = {
        "schema_version": 1,
        "run_id": run_id,
        "started_at": "2026-12-01T10:00:00Z",
        "ended_at": "2026-12-01T10:00:01Z",
        "duration_ms": 1000.0,
        "qlab_version": "0.1.0",
        "project": "demo",
        "fingerprint": {
            "digest": f"fp-{run_id}",
            "config_digest": "sha256:config",
            "collection_digest": collection,
            "engine": "builtin",
            "model": model,
            "model_settings": {},
            "qlab_version": "0.1.0",
        },
        "provenance": {
            "dataset": {"files": [], "digest": "sha256:dataset"},
            "model": model,
            "run_configuration": {},
        },
        "shard": None,
        "cases": cases,
        "suites": suites,
        "stages": {},
        "gates": [],
        "guards": [],
        "decision": {"verdict": "pass", "reasons": [], "exit_code": 0},
    }
    out.update(extra)
    return out


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=2, default=to_json), encoding="utf-8")
    return path


DEMO_API = Path(__file__).resolve().parents[2] / "runner" / "qlab" / "demo" / "openapi.yaml"
CONFIG = """\
version: 1
project: gov-test
collection:
  sources:
    - name: demo
      openapi: api.yaml
{aliases}suites:
  search_core:
    mode: search
    cases: [gates/search_core/*.yaml]
  regression:
    mode: plan
    cases: [gates/regression/*.yaml]
    category: regression
    required: {required}
gates:
  - name: search
    stage: search
    suites: [search_core]
{plan_gate}learning:
  regression_suite: regression
{extra}"""


def make_project(
    tmp_path: Path,
    *,
    required: bool = True,
    aliases: str | None = None,
    extra: str = "",
    gated: bool = True,
    regression_seed: bool = True,
) -> Path:
    """A small valid project on the demo API: suites search_core and regression (plan, ``required``).

    ``aliases``: the reviewed aliases file's text (collection.aliases: gates/aliases.yaml); ``extra``: YAML
    appended to qlab.yaml (promotion:, release:, ...); ``gated``: the plan gate runs the regression suite."""
    (tmp_path / "gates" / "search_core").mkdir(parents=True)
    (tmp_path / "gates" / "regression").mkdir(parents=True)
    shutil.copy(DEMO_API, tmp_path / "api.yaml")
    if aliases is not None:
        (tmp_path / "gates" / "aliases.yaml").write_text(aliases, encoding="utf-8")
    text = CONFIG.format(
        required=str(required).lower(),
        aliases="  aliases: gates/aliases.yaml\n" if aliases is not None else "",
        extra=extra,
        plan_gate="  - name: plan\n    stage: plan\n    suites: [regression]\n" if gated else "",
    )
    (tmp_path / "qlab.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "gates" / "search_core" / "cases.yaml").write_text(
        "- id: s-parcel\n  query: where is my parcel\n  expected_target: trackDelivery\n"
        "  provided_entities: {deliveryId: D-5003}\n  tags: [tracking]\n",
        encoding="utf-8",
    )
    # a suite's glob must match a case file (an empty suite would let its gate pass as "skipped"); a caller
    # that writes its own regression cases goes without the seed
    if regression_seed:
        (tmp_path / "gates" / "regression" / "seed.yaml").write_text(
            "- id: r-health\n  query: check the service health\n  expected_target: getHealth\n",
            encoding="utf-8",
        )
    return tmp_path / "qlab.yaml"


# a project whose alias proposal fixes a search miss and sends other cases elsewhere (the sandbox's honesty)
HONEST = """\
version: 1
project: honest-sandbox
collection:
  sources:
    - name: demo
      openapi: api.yaml
  aliases: gates/aliases.yaml
environments:
  dev:
    base_url: http://127.0.0.1:9
suites:
  search_core: {mode: search, cases: [gates/search_core/*.yaml]}
  plan_e2e: {mode: plan, cases: [gates/plan_e2e/*.yaml]}
  execute_read: {mode: execute, cases: [gates/execute_read/*.yaml], environment: dev}
gates:
  - {name: search, stage: search, suites: [search_core], stop_if: [expected_target_absent]}
  - {name: plan, stage: plan, suites: [plan_e2e]}
  - {name: execute, stage: execute, suites: [execute_read]}
learning:
  suggestions_file: .qlab/suggestions.json
"""
STEALING_ALIAS = {"id": "sg-00000000000a", "status": "pending_review", "type": "collection_metadata", "kind": "alias",
          "tool_id": "cancelOrder", "aliases": ["show order"], "evidence": []}  # fmt: skip


def honest_project(tmp_path: Path, *, plan_cases: bool = True) -> Path:
    for folder in ("search_core", "plan_e2e", "execute_read"):
        (tmp_path / "gates" / folder).mkdir(parents=True)
    shutil.copy(DEMO_API, tmp_path / "api.yaml")
    (tmp_path / "gates" / "aliases.yaml").write_text("getHealth:\n  - service health\n", encoding="utf-8")
    (tmp_path / "qlab.yaml").write_text(HONEST, encoding="utf-8")
    (tmp_path / "gates" / "search_core" / "cases.yaml").write_text(
        "- id: s-miss\n  query: show order\n  expected_target: cancelOrder\n  expected_top_k: 1\n",
        encoding="utf-8",
    )
    (tmp_path / "gates" / "execute_read" / "cases.yaml").write_text(
        "- id: e-order\n  query: Show order O-9001\n  expected_target: getOrder\n"
        "  provided_entities: {orderId: O-9001}\n  mutation_safety: read_only\n"
        "  assertions:\n    - {type: http_status, in: [200]}\n",
        encoding="utf-8",
    )
    (tmp_path / "gates" / "plan_e2e" / "cases.yaml").write_text(
        "- id: p-order\n  query: show order O-9002 please\n  expected_target: getOrder\n"
        "  provided_entities: {orderId: O-9002}\n"
        if plan_cases
        else "- id: p-health\n  query: check the service health\n  expected_target: getHealth\n",
        encoding="utf-8",
    )
    return tmp_path / "qlab.yaml"


def blocked_at_search(*ids: str) -> dict[str, Any]:
    """A stored run the search miss blocked: the later cases it holds (``ids``: e-order, p-order) never ran, and
    have no execute outcome."""
    blocked = {"stage": "search", "reason": "blocked_by_stage", "message": "the search gate blocked the run"}
    later = [
        {"case_id": i, "suite": s, "mode": m, "status": "blocked", "failure": blocked, "latency_ms": {}}
        for i, s, m in (("e-order", "execute_read", "execute"), ("p-order", "plan_e2e", "plan"))
        if i in ids
    ]
    miss = search_case("s-miss", rank=None, top=["getOrder"], top_k=1)
    # the search gate that blocked: a reader judges the stored run again from its cases (qlab.run.verify)
    search = {"name": "search", "stage": "search", "suites": ["search_core"], "status": "blocked",
              "thresholds": [], "stops": [], "reasons": []}  # fmt: skip
    return artifact(
        [miss, *later], gates=[search], decision={"verdict": "block", "reasons": [], "exit_code": 1}
    )

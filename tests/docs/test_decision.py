"""docs/decision.md: every worked example is evaluated with the decision rule's code (``qlab.run.gates``) and the
outcome printed under it must be exactly what the code renders, so the written rule and the code cannot drift.

Run with ``QLAB_WRITE_DOCS=1`` to rewrite the outcome blocks from the code (then read the diff).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from qlab.contracts import metrics
from qlab.report import derive
from qlab.run import gates
from qlab.run.gates import GateSpec

DOC = Path(__file__).resolve().parents[2] / "docs" / "decision.md"
EXAMPLE = re.compile(r"### (\d+)\. [^\n]*\n.*?```yaml\n(.*?)```\n\n```text\n(.*?)```", re.S)
# the stage objects a case carries once it passed a stage (what the real stages write, reduced)
OBJECTS: dict[str, tuple[str, Any]] = {
    "search": ("search", {"hit": True, "hit_rank": 1, "top_k": 5, "rows": []}),
    "select": ("target_selector", {"selected_target": "t", "llm_target": None, "overrode_llm": False}),
    "plan": ("plan", {"status": "synthesized"}),
    "execute": ("execute", {"http_status": 200}),
}


def _case(spec: dict[str, Any]) -> dict[str, Any]:
    """A result.json case from an example's short form (``stage``/``reason``: its failure)."""
    case: dict[str, Any] = {
        "case_id": spec["id"],
        "suite": spec["suite"],
        "mode": spec["mode"],
        "status": spec["status"],
        "latency_ms": {},
    }
    failed_at = spec.get("stage")
    for stage in metrics.MODE_STAGES[spec["mode"]]:
        if stage == failed_at:
            break
        key, value = OBJECTS[stage]
        case[key] = dict(value)
    if spec["mode"] == "execute":
        case["mutation_safety"] = "read_only"
    if failed_at:
        case["failure"] = {"stage": failed_at, "reason": spec["reason"], "message": ""}
    for key in ("attempts", "passes", "flaky", "lifecycle"):
        if key in spec:
            case[key] = spec[key]
    return case


def _spec(gate: dict[str, Any]) -> GateSpec:
    thresholds = tuple(
        (metric, text.split()[0], float(text.split()[1]))
        for metric, text in (gate.get("thresholds") or {}).items()
    )
    return GateSpec(
        gate["name"], gate["stage"], tuple(gate["suites"]), thresholds, max_failures=gate.get("max_failures")
    )


def render(example: dict[str, Any]) -> str:
    """The outcome of an example, as the decision rule's code gives it."""
    # an archived case never runs: the selection leaves it out and the result lists it (``archived_cases``)
    archived = [c["id"] for c in example["cases"] if c.get("lifecycle") == "archived"]
    cases = [_case(c) for c in example["cases"] if c.get("lifecycle") != "archived"]
    rules = gates.suite_rules(example["suites"])
    records: list[dict[str, Any]] = []
    judged: list[GateSpec] = []
    lines: list[str] = [f"archived, not run: {', '.join(archived)}"] if archived else []
    for gate in example["gates"]:
        spec = _spec(gate)
        mine = [c for c in cases if c["suite"] in spec.suites]
        suite_metrics = {
            s: metrics.case_metrics([c for c in mine if c["suite"] == s])
            for s in spec.suites
            if any(c["suite"] == s for c in mine)
        }
        record = gates.evaluate(
            spec, cases=mine, suite_metrics=suite_metrics, stage_metrics={}, rules=rules, earlier=judged
        )
        judged.append(spec)
        records.append(record)
        lines.append(f"gate {spec.name}: {record['status']}")
        for row in record["thresholds"]:
            outcome = "holds" if row["passed"] else "breached" if row["passed"] is False else "no data"
            earlier = ", ".join(
                f"{n} failed at {stage}" for stage, n in (row.get("failed_earlier") or {}).items()
            )
            lines.append(
                f"  threshold {row['metric']} {row['op']} {row['value']:g} [{row['suite']}]: "
                f"{row['actual']:g} {outcome}" + (f" (counting {earlier})" if earlier else "")
            )
        lines += [f"  - {reason}" for reason in record["reasons"]]
    decision = gates.decide(records, cases=cases, suites=example["suites"])
    lines.append(f"decision: {derive.verdict(decision).upper()} (exit {decision['exit_code']})")
    return "\n".join(lines) + "\n"


def _examples() -> list[tuple[str, str, str]]:
    return EXAMPLE.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_the_worked_examples() -> None:
    assert [number for number, _, _ in _examples()] == [str(n) for n in range(1, 11)]


@pytest.mark.parametrize(("number", "source", "outcome"), _examples(), ids=[n for n, _, _ in _examples()])
def test_each_worked_example_is_what_the_code_decides(number: str, source: str, outcome: str) -> None:
    rendered = render(yaml.safe_load(source))
    if os.environ.get("QLAB_WRITE_DOCS") == "1" and rendered != outcome:
        text = DOC.read_text(encoding="utf-8")
        DOC.write_text(text.replace(f"```text\n{outcome}```", f"```text\n{rendered}```", 1), encoding="utf-8")
        outcome = rendered
    assert rendered == outcome, (
        f"docs/decision.md example {number} says:\n{outcome}\nthe code gives:\n{rendered}"
    )


def test_the_page_is_linked_from_the_readme_and_the_docs_index() -> None:
    root = DOC.parents[1]
    assert "docs/decision.md" in (root / "README.md").read_text(encoding="utf-8")
    assert "decision.md" in (root / "docs" / "README.md").read_text(encoding="utf-8")

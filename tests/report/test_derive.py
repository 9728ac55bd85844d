from __future__ import annotations

import pytest

import artifact_samples as samples
from qlab.contracts.reasons import REASONS
from qlab.report import derive


def test_hit_at_k_curve_is_the_share_of_cases_ranked_at_or_above_k() -> None:
    cases = samples.result()["cases"]
    curve = derive.hit_at_k_curve(cases)
    # 7 cases carry a search object; ranks 1,2,4,None,1,1,1 -> hit@1 4/7, hit@2 5/7, hit@3 5/7, hit@4 6/7, hit@5 6/7
    assert curve.ks == (1, 2, 3, 4, 5)
    assert curve.series["all"] == pytest.approx((4 / 7, 5 / 7, 5 / 7, 6 / 7, 6 / 7))
    assert curve.series["search_core"] == pytest.approx((1 / 4, 2 / 4, 2 / 4, 3 / 4, 3 / 4))
    assert curve.sizes["all"] == 7
    assert curve.configured_k == 5


def test_hit_at_k_curve_counts_a_hit_false_case_as_a_miss_and_ignores_cases_without_search() -> None:
    cases = [
        {"case_id": "a", "suite": "s", "search": {"hit": False, "hit_rank": 3, "top_k": 3}},
        {"case_id": "b", "suite": "s", "search": {"hit": True, "hit_rank": 3, "top_k": 3}},
        {"case_id": "c", "suite": "s"},  # blocked before search: no search object
    ]
    curve = derive.hit_at_k_curve(cases)
    assert list(curve.series) == ["all"]  # one suite: no duplicate per-suite line
    assert curve.series["all"] == pytest.approx((0.0, 0.0, 0.5))


def test_hit_at_k_curve_without_search_cases_is_empty() -> None:
    assert derive.hit_at_k_curve([{"case_id": "x"}]).ks == ()


def test_failure_classes_group_by_reason_with_stage_and_hint() -> None:
    classes = derive.failure_classes(samples.fixed_result()["cases"])
    first = classes[0]
    assert (first.reason, first.stage, first.count) == ("expected_target_absent", "search", 2)
    assert first.hint == REASONS["expected_target_absent"].hint
    assert set(first.case_ids) == {"member-search-002", "member-search-004"}


def test_failure_classes_keep_unknown_codes_visible() -> None:
    classes = derive.failure_classes([{"case_id": "x", "failure": {"stage": "plan", "reason": "made_up"}}])
    assert classes[0].meaning == "not a registered reason code"
    assert classes[0].hint == ""


def test_case_diff_classifies_every_case() -> None:
    diff = derive.case_diff(samples.result(), samples.fixed_result())
    kinds = {c.case_id: c.kind for c in diff.changes}
    assert kinds["member-plan-002"] == "fixed"
    assert kinds["member-search-002"] == "regressed"
    assert kinds["member-search-004"] == "still_failing"
    assert kinds["member-search-005"] == "new_passing"
    assert kinds["member-exec-001"] == "removed"
    assert "member-search-001" not in kinds  # passing in both: counted, not listed
    assert diff.counts == {
        "regressed": 1,
        "fixed": 1,
        "still_failing": 1,
        "new_failing": 0,
        "new_passing": 1,
        "unevaluated": 0,
        "removed": 1,
        "passing": 3,
    }
    assert diff.changes[0].kind == "regressed"  # regressions come first
    assert diff.changes[0].required  # search_core is a required suite
    fixed = next(c for c in diff.changes if c.kind == "fixed")
    assert (fixed.before, fixed.after, fixed.before_reason) == (
        "failed",
        "passed",
        "required_fields_unsatisfied",
    )


def test_metric_trends_keep_gaps_and_drop_metrics_without_data() -> None:
    first, second = samples.result(), samples.fixed_result()
    del second["metrics"]["search_top_1"]
    trends = derive.metric_trends([first, second])
    assert trends["plan hit rate"] == [0.5, 1.0]
    assert trends["search Top-1"] == [0.5714, None]
    assert "execute read success rate" not in trends  # null in every run
    assert "scorecard: human_acceptance" not in trends
    assert trends["scorecard: correctness"] == [0.57, 0.71]
    assert trends["case pass rate"] == pytest.approx([4 / 7, 5 / 7])


def test_stage_latency_prefers_stored_percentiles_and_else_computes_them() -> None:
    stored = derive.stage_latency(samples.result())
    assert stored["plan"] == (40.0, 120.0)
    computed = derive.stage_latency(
        {"cases": [{"latency_ms": {"search": float(ms), "plan": 1.0}} for ms in range(1, 101)]}
    )
    assert computed["search"] == (50.0, 95.0)
    assert list(computed) == ["search", "plan"]


@pytest.mark.parametrize(
    ("values", "q", "expected"), [([], 50, None), ([3.0], 95, 3.0), ([1.0, 2.0, 3.0, 4.0], 50, 2.0)]
)
def test_percentile_nearest_rank(values: list[float], q: float, expected: float | None) -> None:
    assert derive.percentile(values, q) == expected


def test_status_counts_and_number_ignore_malformed_values() -> None:
    result = {"cases": [{"status": "passed"}, "not a case", {"status": "failed"}]}
    assert derive.status_counts(result) == {"passed": 1, "failed": 1, "error": 0, "blocked": 0, "skipped": 0}
    assert derive.number(True) is None
    assert derive.number(float("nan")) is None
    assert derive.number("0.5") is None
    assert derive.number(2) == 2.0


def _decided(verdict: str, code: int) -> dict[str, object]:
    artifact = samples.result()
    artifact["decision"] = {"verdict": verdict, "reasons": ["r"], "exit_code": code, "advisory": False}
    return artifact


def _words(artifact: dict[str, object]) -> dict[str, str]:
    """The verdict as each output writes it: console, summary, JUnit decision, HTML header, GitHub output."""
    import re
    from datetime import datetime, timezone

    from qlab.report import console, github, junit, markdown
    from qlab.report.html import render_html

    xml = junit.render(artifact, hostname="h")
    decision = re.search(r'<testcase name="decision" classname="qlab"[^>]*>\s*<(\w+) message="(\w+)', xml)
    html = render_html([artifact], generated_at=datetime(2026, 12, 1, tzinfo=timezone.utc))
    return {
        "console": console.gate_table(artifact).splitlines()[-2].split(":")[0],
        "summary": markdown.render(artifact).split("qlab: ", 1)[1].split(" ", 1)[0],
        "junit": decision.group(2).rstrip(":") if decision else "PASS",
        "html": re.search(r'<div class="verdict (\w+)">(\w+)</div>', html).group(2),  # type: ignore[union-attr]
        "github": github.outputs(artifact, {})["decision"].upper(),
    }


@pytest.mark.parametrize(
    ("verdict", "code", "word"),
    [
        ("pass", 0, "PASS"),
        ("block", 1, "BLOCK"),
        ("block", 0, "BLOCK"),
        ("error", 2, "ERROR"),
        ("block", 2, "ERROR"),
    ],
)
def test_every_output_says_the_same_verdict_word(verdict: str, code: int, word: str) -> None:
    """One word per run in every output; an exit code of 2 is ERROR even in an artifact that said "block"."""
    artifact = _decided(verdict, code)
    artifact["decision"]["reasons"] = ["r"] if word != "PASS" else ["1 gate(s) passed"]  # type: ignore[index]
    assert derive.verdict(artifact["decision"]) == word.lower()
    assert set(_words(artifact).values()) == {word}, _words(artifact)


def test_since_last_names_the_cases_and_metrics_that_moved() -> None:
    """Rule: "since the last run" lists the newly failing cases, the newly passing ones and each acceptance metric
    that moved; the same two runs asked again give the same answer."""

    def case(case_id: str, status: str) -> dict[str, object]:
        failure = {"stage": "search", "reason": "expected_target_absent"} if status == "failed" else None
        return {
            "case_id": case_id,
            "suite": "s",
            "status": status,
            **({"failure": failure} if failure else {}),
        }

    previous = {"run_id": "r1", "cases": [case("a", "passed"), case("b", "passed")], "metrics": {}}
    current = {"run_id": "r2", "cases": [case("a", "passed"), case("b", "failed")], "metrics": {}}
    first = derive.since_last(previous, current)
    assert [c.case_id for c in first.newly_failing] == ["b"]
    assert derive.since_last(previous, current) == first
    current["cases"].append(case("c", "failed"))
    assert [c.case_id for c in derive.since_last(previous, current).newly_failing] == ["b", "c"]
    earlier = {**previous, "cases": [case("a", "passed"), case("b", "failed")]}  # b failed before too
    assert [c.case_id for c in derive.since_last(earlier, current).newly_failing] == ["c"]
    assert [c.case_id for c in derive.since_last(current, earlier).newly_passing] == []
    previous["metrics"] = {"search_hit_at_k": 1.0}
    assert derive.since_last(previous, {**current, "metrics": {"search_hit_at_k": 0.5}}).metrics
    other = {**current, "cases": [case("a", "passed"), case("b", "passed")]}
    assert derive.since_last(previous, other).newly_failing == ()

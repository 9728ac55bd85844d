"""A draft case that fails never gates, and every report says so: JUnit skips it, GitHub warns, the summary does
not list it among the failures that gate."""

from __future__ import annotations

import copy
from typing import Any

import artifact_samples as samples
from qlab.report import github, junit, markdown


def _artifact() -> dict[str, Any]:
    art = samples.result()
    art["cases"].append({**copy.deepcopy(art["cases"][0]), "case_id": "draft-1", "status": "failed", "lifecycle": "draft",
                         "failure": {"stage": "search", "reason": "expected_target_absent", "message": "x"}})  # fmt: skip
    return art


def test_junit_shows_a_failing_draft_case_as_a_failure_that_does_not_gate() -> None:
    """Like every non-gating finding: visible as a failure, its message and the suite's ``qlab.non_gating``
    property saying it does not gate (a skipped testcase would hide it in every dashboard)."""
    xml = junit.render(_artifact(), hostname="ci-host")
    line = next(line for line in xml.splitlines() if 'name="draft-1"' in line)
    tail = xml[xml.index(line) :].split("</testcase>")[0]
    assert '<failure message="does not gate (draft case)' in tail and "<skipped" not in tail
    assert '<property name="qlab.non_gating" value="draft-1"' in xml


def test_github_warns_and_the_summary_leaves_it_out_of_the_gating_failures() -> None:
    lines = github.annotation_lines(_artifact())
    draft = [line for line in lines if "draft-1" in line]
    assert draft and all(line.startswith("::warning") for line in draft)
    assert not any(c.get("case_id") == "draft-1" for c in markdown._failing(_artifact()))

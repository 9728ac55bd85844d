"""``qlab merge`` of 1, 2 and 3 shards gives the unsharded run: the same decision, metrics, cases (stage objects
included) and JUnit testcases; each check once; environments that listen elsewhere per shard are recorded."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from qlab.contracts.errors import SpecFetchError
from qlab.contracts.results import to_json
from qlab.project.model import Environment
from qlab.report import junit
from qlab.run import guards
from qlab.run.artifact import read, write
from qlab.run.merge import merge
from qlab.run.runner import run
from qlab.run.shard import ShardSpec
from run import story


def _testcases(artifact: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(classname, name, outcome) of every JUnit testcase: what CI test history is keyed on."""
    root = ET.fromstring(junit.render(artifact, hostname="h"))
    return sorted(
        (t.get("classname", ""), t.get("name", ""), next((c.tag for c in t), "passed"))
        for t in root.iter("testcase")
    )


@pytest.mark.parametrize("total", story.SHARDS)
@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_merged_shards_tell_the_unsharded_story(scenario: str, total: int) -> None:
    told = story.story(scenario)
    whole, merged = told.whole, told.merged[total]
    assert merged["decision"] == whole["decision"]
    assert merged["metrics"] == whole["metrics"]
    assert {n: s["metrics"] for n, s in merged["suites"].items()} == {
        n: s["metrics"] for n, s in whole["suites"].items()
    }
    assert merged["cases"] == whole["cases"]  # statuses, failures and every stage object, byte for byte
    assert _testcases(merged) == _testcases(whole)
    assert [(g["name"], g["status"], g["reasons"]) for g in merged["gates"]] == [
        (g["name"], g["status"], g["reasons"]) for g in whole["gates"]
    ]
    assert set(merged["stages"]) == set(whole["stages"])  # no stage a blocked merged run never reached


_OBJECTS = {"search": "search", "select": "target_selector", "plan": "plan", "execute": "execute"}


@pytest.mark.parametrize("scenario", story.SCENARIOS)
def test_a_stopped_merged_run_keeps_no_stage_object_past_the_stop(scenario: str) -> None:
    """A case the stopping gate kept from running keeps only the objects of the stages it went through before the
    stop, whatever its shard ran past it: the plan cases searched and selected before the select gate blocked keep
    those two, and nothing of plan."""
    merged = story.story(scenario).merged[3]
    stopped = [c for c in merged["cases"] if c["status"] in ("blocked", "skipped")]
    # the execute gate is the last to judge cases: when it stops the run, no case is left for a later gate
    assert bool(stopped) is (scenario not in ("pass", "execute", "error"))
    for case in stopped:
        stop = case["failure"]["stage"]
        later = list(_OBJECTS)[list(_OBJECTS).index(stop) + 1 :] if stop in _OBJECTS else list(_OBJECTS)
        assert not ({_OBJECTS[s] for s in later} & set(case)), case
    if scenario == "select":
        went = [c for c in stopped if "target_selector" in c]
        assert went and all(
            c["failure"]["message"].endswith("went through select and never reached plan") for c in went
        )


def test_each_check_is_written_once_however_many_shards_ran_it() -> None:
    merged = story.story("pass").merged[3]
    for gate in merged["gates"]:
        identities = [guards.identity(g) for g in gate["guards"]]
        assert len(identities) == len(set(identities)), gate["name"]
    search = next(g for g in merged["gates"] if g["name"] == "search")
    schema = next(g for g in search["guards"] if g["guard"] == "output_schema")
    # its runs' messages differ (counts): each is kept, named by shard
    assert schema["message"].startswith("shard 1/3: ") and "; shard 3/3: " in schema["message"]


def test_a_check_that_failed_in_one_shard_failed() -> None:
    records = [
        ("shard 1/2", {"guard": "budget", "stage": "search", "gate": "search", "passed": True, "mode": "block", "message": "1.0 s"}),
        ("shard 2/2", {"guard": "budget", "stage": "search", "gate": "search", "passed": False, "mode": "block", "message": "over: 901 s", "reason": "budget_exceeded"}),
        ("shard 1/2", {"guard": "auth_readiness", "stage": "pre-run", "subject": "dev", "passed": True, "mode": "warn", "message": "ok"}),
        ("shard 2/2", {"guard": "auth_readiness", "stage": "pre-run", "subject": "stage", "passed": True, "mode": "warn", "message": "ok"}),
    ]  # fmt: skip
    combined = guards.combine(records)
    assert [(g["guard"], g.get("subject"), g["passed"]) for g in combined] == [
        ("budget", None, False),
        ("auth_readiness", "dev", True),
        ("auth_readiness", "stage", True),
    ]
    assert combined[0]["message"] == "over: 901 s" and combined[0]["reason"] == "budget_exceeded"


def _answers(url: str, timeout: float) -> tuple[bool, str]:
    return True, "HTTP 200"


def test_shards_whose_environment_listens_on_another_port_merge(tmp_path: Path) -> None:
    """A port read from the runner's environment may differ per shard: the merge goes on and records it."""
    fake = story.project(tmp_path, "pass")
    paths = []
    for i in (1, 2):
        env = Environment("dev", f"http://127.0.0.1:{8100 + i}", allowed_hosts=("127.0.0.1",))
        config = dataclasses.replace(fake.config, environments={"dev": env})
        shard = dataclasses.replace(fake, config=config)
        art = run(shard, options=story.options(tmp_path, ShardSpec(i, 2), reach=_answers)).artifact
        paths.append(write(tmp_path / f"qlab-shard-{i}-of-2.json", art))
    merged = merge([(p, read(p)) for p in paths])
    assert merged["shard"]["differed"] == [
        {"field": "environments.dev.base_url", "values": ["http://127.0.0.1:8101", "http://127.0.0.1:8102"]}
    ]
    assert merged["decision"] == story.story("pass").whole["decision"]


# ------------------------------------------------------------------ a shard that could not decide beside one that blocked


def _with(scenario: str, **targets: str) -> list[Any]:
    """The scenario's cases with some expected targets changed (``run.fakes``: ``absent:``, ``down:``, ...)."""
    out = story.cases(scenario)
    return [
        story.f.case(c.id, c.suite, c.mode, targets[c.id], line=c.origin.line) if c.id in targets else c
        for c in out
    ]


def _two_shards(tmp_path: Path, cases: list[Any], **per_shard: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The unsharded run and the merge of two shards; ``per_shard``: options of shard 1 only (its runner)."""
    fake = dataclasses.replace(story.project(tmp_path, "pass"), cases=tuple(cases))
    whole = run(fake, options=story.options(tmp_path, **per_shard)).artifact
    paths = []
    for i in (1, 2):
        opts = story.options(tmp_path, ShardSpec(i, 2), **(per_shard if i == 1 else {}))
        paths.append(write(tmp_path / f"qlab-shard-{i}-of-2.json", run(fake, options=opts).artifact))
    merged = merge([(p, read(p)) for p in paths])
    return json.loads(json.dumps(whole, default=to_json)), json.loads(json.dumps(merged, default=to_json))


def _refused(url: str, timeout: float) -> tuple[bool, str]:
    return False, "connection refused"


def _spec_down(config: Any, gate: Any) -> Any:
    raise SpecFetchError("http://127.0.0.1:9/openapi.json: connection refused")


def test_an_error_shard_beside_a_blocked_one_merges_to_error_when_the_error_comes_first(
    tmp_path: Path,
) -> None:
    """Rule (issue 36, 3): one shard ERROR, another BLOCK: the merge says what one run would — ERROR (exit 2)
    when the fault comes at or before the block. Here the spec URL did not answer on shard 1's runner."""
    cases = _with("pass", s01="absent:x", s02="absent:y")  # s01 on shard 2, which blocks at search
    whole, merged = _two_shards(tmp_path, cases, build=_spec_down)
    assert whole["decision"]["verdict"] == "error"
    assert (merged["decision"]["verdict"], merged["decision"]["exit_code"]) == ("error", 2)
    assert merged["decision"]["reasons"] == whole["decision"]["reasons"]
    assert [(g["name"], g["status"]) for g in merged["gates"]] == [
        (g["name"], g["status"]) for g in whole["gates"]
    ]
    assert merged["cases"] == whole["cases"]  # every case never ran, as in the one run


def test_a_shard_whose_pre_run_check_failed_makes_the_merge_error_with_no_case_judged(tmp_path: Path) -> None:
    """Shard 1's environment did not answer on its runner (pre-run check), shard 2 blocked at search: nothing the
    merge holds is a verdict on the product — ERROR, every case never ran, no gate after the build blocked."""
    cases = _with("pass", s01="absent:x", s02="absent:y")
    _, merged = _two_shards(tmp_path, cases, reach=_refused)
    assert (merged["decision"]["verdict"], merged["decision"]["exit_code"]) == ("error", 2)
    assert merged["decision"]["reasons"][0].startswith("pre-run check environment_reachable failed")
    assert {c["status"] for c in merged["cases"]} == {"skipped"}
    assert {c["failure"]["stage"] for c in merged["cases"]} == {"run"}
    assert not {"search", "target_selector"} & {k for c in merged["cases"] for k in c}
    assert all(g["status"] in ("passed", "skipped") for g in merged["gates"]), merged["gates"]


def test_an_error_and_a_block_at_the_same_gate_merge_to_error(tmp_path: Path) -> None:
    cases = _with("pass", e00="down:x", e01="assert:x", e02="assert:y")  # the shards split e00 and e01
    whole, merged = _two_shards(tmp_path, cases)
    assert whole["decision"]["verdict"] == merged["decision"]["verdict"] == "error"
    assert merged["decision"] == whole["decision"] and merged["cases"] == whole["cases"]

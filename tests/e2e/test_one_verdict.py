"""One verdict, told the same way everywhere: each decision — PASS, BLOCK at build, search, select, plan and
execute, ERROR — walked through ``qlab run``, ``qlab run --shard i/N`` + ``qlab merge`` (1, 2 and 3 shards),
``qlab release`` and the GitHub Action's own shell steps (run as the runner runs them, with ``$GITHUB_OUTPUT``
and ``$GITHUB_STEP_SUMMARY`` files), on the demo project with the real stages and the demo server qlab starts.

Everywhere the same decision, the same metrics (every figure that is not a timing) and the same JUnit testcases.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from qlab.project.scaffold import demo_files, write_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_demo_run import _cli  # in process: the exit code and the output

import servers
from github_files import parse_outputs

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
SKILL = "member-delivery-skill"
pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------------------------- the scenarios


def _add(name: str, text: str) -> Callable[[Path], None]:
    def change(project: Path) -> None:
        (project / name).write_text(text, encoding="utf-8")

    return change


def _replace(old: str, new: str, file: str = "qlab.yaml") -> Callable[[Path], None]:
    def change(project: Path) -> None:
        path = project / file
        text = path.read_text(encoding="utf-8")
        assert old in text, (old, file)
        path.write_text(text.replace(old, new), encoding="utf-8")

    return change


# scenario -> (the change to the demo project, the decision, the gate that decides it)
SCENARIOS: dict[str, tuple[Callable[[Path], None], str, str | None]] = {
    "pass": (lambda project: None, "pass", None),
    "build": (_replace("schema_coverage_below: 0.8", "schema_coverage_below: 0.95"), "block", "build"),
    "search": (
        _add("gates/search_core/zz-miss.yaml", "- id: search-miss\n  query: quantum flux calibration\n  expected_target: getHealth\n"),
        "block",
        "search",
    ),
    "select": (
        _add("gates/regression/zz-wrong.yaml", "- id: regression-wrong\n  query: Show order O-9001\n  expected_target: listOrders\n  provided_entities: {orderId: O-9001}\n"),
        "block",
        "select",
    ),
    "plan": (
        _add("gates/plan_e2e/zz-input.yaml", "- id: plan-needs-input\n  query: reschedule a delivery\n  expected_target: rescheduleDelivery\n  provided_entities: {deliveryId: D-5002}\n"),
        "block",
        "plan",
    ),
    "execute": (
        _add("gates/execute_read/zz-status.yaml", "- id: execute-wrong-status\n  query: Show the profile of member M-1001\n  expected_target: getMember\n  provided_entities: {memberNo: M-1001}\n  assertions:\n    - {type: http_status, in: [404]}\n"),
        "block",
        "execute",
    ),
    "error": (
        _replace("command: python -m qlab.demo.server --port ${QLAB_DEMO_PORT:-8765} --token-env QLAB_DEMO_TOKEN",
                 'command: python -c "raise SystemExit(3)"'),
        "error",
        "execute",
    ),
}  # fmt: skip


# --------------------------------------------------------------------------------------------- what is compared


def _untimed(figures: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in figures.items() if "latency" not in k}


@dataclass(frozen=True)
class Told:
    """What a run tells, timings left out: what must be the same however it was run."""

    decision: tuple[str, int]
    gates: tuple[tuple[str, str], ...]
    metrics: Mapping[str, Any]
    suites: Mapping[str, Any]
    scorecard: Mapping[str, Any]
    not_reached: Mapping[str, Any]
    cases: tuple[tuple[str, str, str | None, str | None], ...]
    testcases: frozenset[tuple[str, str, str]]


def _testcases(junit: Path) -> frozenset[tuple[str, str, str]]:
    root = ET.parse(junit).getroot()
    return frozenset(
        (
            t.get("classname", ""),
            t.get("name", ""),
            next((c.tag for c in t if c.tag != "system-out"), "passed"),
        )
        for t in root.iter("testcase")
    )


def told(result: Path, junit: Path | None = None) -> Told:
    art = json.loads(result.read_text(encoding="utf-8"))
    junit = junit or result.parent / "junit.xml"
    return Told(
        decision=(art["decision"]["verdict"], art["decision"]["exit_code"]),
        gates=tuple((g["name"], g["status"]) for g in art["gates"]),
        metrics=_untimed(art["metrics"]),
        suites={name: (_untimed(s["metrics"]), s["counts"]) for name, s in art["suites"].items()},
        scorecard=_untimed(art["scorecard"]),
        not_reached=art["not_reached"],
        cases=tuple(
            (
                c["case_id"],
                c["status"],
                (c.get("failure") or {}).get("stage"),
                (c.get("failure") or {}).get("reason"),
            )
            for c in art["cases"]
        ),
        testcases=_testcases(junit),
    )


# --------------------------------------------------------------------------------------------- running qlab


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo project (as ``qlab init demo`` writes it) in a folder of its own, a free port for its server."""
    project = tmp_path / "demo"
    write_files(project, demo_files(), force=False)
    monkeypatch.setenv("QLAB_DEMO_PORT", str(servers.free_port()))
    monkeypatch.delenv("QLAB_DEMO_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    yield project


# --------------------------------------------------------------------------------------------- the action, as the runner runs it

_EXPRESSION = re.compile(r"\$\{\{ *([a-z_]+)\.([A-Za-z0-9_.-]+) *\}\}")


class Runner:
    """Runs action.yml's shell steps as GitHub's runner does: ``bash --noprofile --norc -eo pipefail``, each step's
    ``env`` with its expressions resolved, ``$GITHUB_OUTPUT`` read back as the step's outputs, ``$GITHUB_PATH``
    added to ``PATH`` for the later steps. Steps that use another action (setup-python, cache) are not run."""

    def __init__(self, temp: Path) -> None:
        self.temp = temp
        self.outputs: dict[str, dict[str, str]] = {}
        self.path: list[str] = []
        self.action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))

    def _resolve(self, text: str, inputs: Mapping[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            scope, name = match.group(1), match.group(2)
            if scope == "inputs":
                return inputs.get(name, str(self.action["inputs"][name].get("default", "")))
            if scope == "steps":
                step, _, output = name.partition(".outputs.")
                return self.outputs.get(step, {}).get(output, "")
            if scope == "github" and name == "action_path":
                return str(ROOT)
            if scope == "runner" and name == "temp":
                return str(self.temp)
            raise AssertionError(f"action.yml uses an expression this runner does not know: {match.group(0)}")

        return _EXPRESSION.sub(value, text)

    def step(self, step_id: str, inputs: Mapping[str, str], *, cwd: Path, env: Mapping[str, str]) -> int:
        step = next(s for s in self.action["runs"]["steps"] if s.get("id") == step_id)
        assert step["shell"] == "bash" and "${{" not in step["run"]
        files = {name: self.temp / f"{step_id}-{name.lower()}" for name in ("GITHUB_OUTPUT", "GITHUB_PATH")}
        for path in files.values():
            path.write_text("", encoding="utf-8")
        full = {
            **os.environ,
            **env,
            "PATH": os.pathsep.join([*self.path, os.environ["PATH"]]),
            "RUNNER_TEMP": str(self.temp),
            **{name: str(path) for name, path in files.items()},
            **{key: self._resolve(str(value), inputs) for key, value in (step.get("env") or {}).items()},
        }
        script = self.temp / f"{step_id}.sh"
        script.write_text(step["run"], encoding="utf-8")
        folder = cwd / self._resolve(str(step.get("working-directory", ".")), inputs)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=folder, env=full, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        self.log = done.stdout + done.stderr
        self.outputs[step_id] = parse_outputs(files["GITHUB_OUTPUT"].read_text(encoding="utf-8"))
        self.path = [*files["GITHUB_PATH"].read_text(encoding="utf-8").split(), *self.path]
        return done.returncode


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """The action installed once for the module: its find-Python and install steps, for real (pip installs
    this checkout into a virtual environment under the runner's temp folder)."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    found = Runner(tmp_path_factory.mktemp("runner"))
    here = found.temp
    assert found.step("python", {}, cwd=here, env={}) == 0, found.log
    assert found.step("install", {}, cwd=here, env={}) == 0, found.log
    assert found.outputs["install"]["version"], found.log
    return found


# --------------------------------------------------------------------------------------------- the walk


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_one_decision_is_told_the_same_way_by_run_merge_release_and_the_action(
    scenario: str, demo: Path, runner: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    change, verdict, deciding = SCENARIOS[scenario]
    change(demo)
    config = demo / "qlab.yaml"
    out = demo / "out"
    exit_code = {"pass": 0, "block": 1, "error": 2}[verdict]

    # qlab run
    code, text = _cli(["run", "--config", str(config), "--out", str(out / "whole")], capsys)
    assert code == exit_code, text
    whole = told(out / "whole" / "result.json")
    assert whole.decision == (verdict, exit_code)
    if deciding is not None:
        decided = dict(whole.gates)[next(n for n, _ in whole.gates if n == deciding)]
        assert decided == ("error" if verdict == "error" else "blocked"), whole.gates

    # sharded runs, merged: the same story with 1, 2 and 3 shards
    for total in (1, 2, 3):
        shards = out / f"shards-{total}"
        for index in range(1, total + 1):
            code, text = _cli(
                [
                    "run",
                    "--config",
                    str(config),
                    "--out",
                    str(shards),
                    "--shard",
                    f"{index}/{total}",
                    "--exit-zero",
                ],
                capsys,
            )
            assert code in (0, 2), text
        merged = out / f"merged-{total}"
        code, text = _cli(["merge", str(shards), "--out", str(merged)], capsys)
        assert code == exit_code, text
        assert told(merged / "result.json") == whole, f"{total} shard(s)"

    # the action: its run step on the project, then its merge step on the three shards
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(demo),
        "QLAB_DEMO_PORT": os.environ["QLAB_DEMO_PORT"],
    }
    summary = runner.temp / f"summary-{scenario}.md"
    summary.write_text("", encoding="utf-8")
    code = runner.step(
        "qlab", {"config": str(config)}, cwd=demo, env={**env, "GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert code == exit_code, runner.log
    step = runner.outputs["qlab"]
    assert (step["decision"], step["exit-code"]) == (verdict, str(exit_code)), runner.log
    assert Path(step["result"]).is_absolute()
    by_action = told(Path(step["result"]), Path(step["junit"]))
    assert by_action == whole
    counts = {s: sum(1 for c in whole.cases if c[1] == s) for s in ("passed", "failed", "blocked", "skipped")}
    assert {s: int(step[s]) for s in counts} == counts
    assert int(step["errors"]) == sum(1 for c in whole.cases if c[1] == "error")
    assert f"qlab: {verdict.upper()}" in summary.read_text(encoding="utf-8")
    code = runner.step("qlab", {"command": "merge", "shards": str(out / "shards-3")}, cwd=demo, env=env)
    assert code == exit_code, runner.log
    assert runner.outputs["qlab"]["decision"] == verdict
    assert told(Path(runner.outputs["qlab"]["result"])) == whole

    # qlab release: a PASS can be published once reviewed; a BLOCK or an ERROR stops at its pre-run checks
    for result in (out / "whole" / "result.json", out / "merged-3" / "result.json"):
        base = ["--result", str(result), "--config", str(config)]
        code, text = _cli(["approve", SKILL, *base, "--by", "alice"], capsys)
        assert code == 0, text
        code, text = _cli(["release", SKILL, *base], capsys)
        if verdict == "pass":
            assert code == 0 and f"{SKILL}: published" in text, text
        else:
            assert code == 2 and "pre-run check result_passed failed (run_not_passed)" in text, text
            assert f"ended {verdict.upper()} (exit {exit_code})" in text
    releases = demo / ".qlab" / "releases.json"
    if verdict == "pass":
        assert json.loads(releases.read_text())["skills"][SKILL]["status"] == "published"
    else:
        assert not releases.exists()  # nothing was judged: the skill stays draft

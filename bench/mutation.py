"""Mutation testing of the code whose bugs would make a gate lie or leak (run by hand; not a test).

    python bench/mutation.py --list                      # the modules and the tests each is tried against
    python bench/mutation.py run/merge run/gates         # mutate these modules, one after the other
    python bench/mutation.py --all                       # every module (engine/index last), ~1-2 h on 2 cores
    python bench/mutation.py run/merge --survivors       # after adding tests: re-try only the last survivors
    python bench/mutation.py --table                     # the per-module table of the last runs (Markdown)

Tool: mutmut 3.x (``pip install 'mutmut>=3.8,<4'``). It runs the chosen tests once to learn which test calls
which function, then tries each mutant in a forked worker against only the tests that reach its function, so a
module's whole run costs seconds to minutes where a tool that re-runs the test command per mutant (cosmic-ray)
costs hours on this suite. mutmut copies the source tree into ``mutants/`` and names mutants by module path
(``src.`` stripped), so each module is tried in its own stage folder, ``.qlab/mutation/<module>/``, laid out as
``src/qlab`` (a link to ``runner/qlab``), ``tests``, ``schemas`` and a generated ``pyproject.toml`` whose
``[tool.mutmut]`` mutates that one file and selects that module's test files. Subprocesses the tests start
import the mutated tree too (``PYTHONPATH``), so a mutant is not spared because its test runs ``python -m qlab``.

Score: killed / (all mutants - skipped), where killed counts a failing test, a timeout and a crash; a mutant no
selected test reaches ("no tests") counts against the score. ``summary.json`` in the stage folder keeps the
figures, the commit measured and every survivor with its diff; bench/README.md says where the decisions are.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STAGES = ROOT / ".qlab" / "mutation"


@dataclass(frozen=True)
class Target:
    source: str  # path under runner/qlab
    tests: tuple[str, ...]  # test files or folders (pytest node ids), relative to the repository


EXECUTE_TESTS = ("tests/execute", "tests/stages/test_execute.py")
GATE_TESTS = ("tests/run/test_gates.py", "tests/docs/test_decision.py", "tests/run/test_runner.py")
PROMOTION_TESTS = (
    "tests/governance/promotion",
    "tests/contracts/test_changes.py",
    "tests/governance/test_real_artifacts.py",
    "tests/commands/test_promote.py",
)
# the order --all uses: the ranker last (its module is the one most likely to be changing)
MODULES: dict[str, Target] = {
    "execute/safety": Target("execute/safety.py", EXECUTE_TESTS),
    "execute/auth": Target("execute/auth.py", (*EXECUTE_TESTS, "tests/reliability/test_secret_canaries.py")),
    "execute/client": Target("execute/client.py", (*EXECUTE_TESTS, "tests/adapters/test_http.py")),
    "execute/credentials": Target(
        "execute/credentials.py", (*EXECUTE_TESTS, "tests/reliability/test_secret_canaries.py")
    ),
    "scrub": Target(
        "adapters/scrub.py",
        (
            "tests/execute/test_scrub.py",
            "tests/reliability/test_secret_canaries.py",
            "tests/run/test_outputs.py",
            "tests/stages/test_execute.py",
            "tests/report",
        ),
    ),
    "run/gates": Target("run/gates.py", GATE_TESTS),
    "run/stops": Target("run/stops.py", ("tests/run/test_stops.py", *GATE_TESTS)),
    "run/merge": Target(
        "run/merge.py",
        (
            "tests/run/test_merge.py",
            "tests/run/test_merge_agreement.py",
            "tests/commands/test_merge.py",
            "tests/run/test_shard.py",
        ),
    ),
    "run/shard": Target(
        "run/shard.py", ("tests/run/test_shard.py", "tests/run/test_merge.py", "tests/commands/test_merge.py")
    ),
    "promotion/checks": Target("governance/promotion/checks.py", PROMOTION_TESTS),
    "promotion/compare": Target("governance/promotion/compare.py", PROMOTION_TESTS),
    "promotion/changes": Target("governance/promotion/changes.py", PROMOTION_TESTS),
    "changes": Target("contracts/changes.py", ("tests/contracts/test_changes.py", *PROMOTION_TESTS)),
    "collection/readiness": Target(
        "collection/readiness.py",
        (
            "tests/collection/test_readiness.py",
            "tests/collection/test_builder.py",
            "tests/collection/test_authcheck.py",
            "tests/stages/test_build.py",
        ),
    ),
    "atomic": Target("adapters/atomic.py", ("tests/adapters/test_atomic.py", "tests/run/test_outputs.py")),
    "run/outputs": Target("run/outputs.py", ("tests/run/test_outputs.py", "tests/adapters/test_atomic.py")),
    "report/junit": Target("report/junit.py", ("tests/report/test_junit.py",)),
    "metrics": Target(
        "contracts/metrics.py",
        ("tests/contracts/test_metrics.py", "tests/run/test_gates.py", "tests/docs/test_decision.py"),
    ),
    "engine/index": Target(
        "engine/index.py",
        ("tests/engine/test_index.py", "tests/engine/test_matching.py", "tests/engine/test_vocabulary.py"),
    ),
}

# files tests read beside the tree (ROOT in the tests is the stage's mutants/ folder): linked, never copied
LINKED = ("runner", "docs", "examples", "gates", "qlab.yaml", "README.md", "ARCHITECTURE.md", "CHANGELOG.md",
          "action.yml", ".github")  # fmt: skip

KILLED = {"killed", "timeout", "segfault", "caught by type check"}


def _pytest_options() -> str:
    """The repository's [tool.pytest.ini_options] block, verbatim (strict markers, warnings as errors, ...)."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.pytest.ini_options]")
    end = text.find("\n[", start + 1)
    return text[start:end].strip() + "\n"


def _tests_at(ref: str | None, stage: Path) -> Path:
    """The tests folder to try the mutants against: the worktree's, or the one committed at ``ref`` (a baseline:
    how strong the tests were before a change)."""
    if ref is None:
        return ROOT / "tests"
    out = stage / "tests-at-ref"
    out.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", ref, "tests"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "tests"


def _stage(name: str, target: Target, *, fresh: bool, tests_at: str | None = None) -> Path:
    stage = STAGES / name.replace("/", "-")
    if fresh and stage.exists():
        shutil.rmtree(stage)
    (stage / "src").mkdir(parents=True, exist_ok=True)
    tests = _tests_at(tests_at, stage)
    for link, to in (("src/qlab", ROOT / "runner" / "qlab"), ("tests", tests),
                     ("schemas", ROOT / "schemas"), ("shared", ROOT.parent / "shared")):  # fmt: skip
        path = stage / link
        if not path.is_symlink():
            path.symlink_to(to, target_is_directory=True)
    mutants = stage / "mutants"
    (mutants / ".qlab").mkdir(parents=True, exist_ok=True)
    (mutants / "src").mkdir(exist_ok=True)  # on sys.path (PYTHONPATH) before mutmut fills it
    for item in (*LINKED, ".qlab/node"):
        path = mutants / item
        if not path.is_symlink() and not path.exists() and (ROOT / item).exists():
            path.symlink_to(ROOT / item)
    config = {
        "source_paths": ["src/qlab"],
        "only_mutate": [f"src/qlab/{target.source}"],
        # a baseline's tests may predate a test file the target names now
        "pytest_add_cli_args_test_selection": [t for t in target.tests if (tests.parent / t).exists()],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "qlab_mutation_plugin"],
        "also_copy": ["schemas"],
    }
    lines = ["[tool.mutmut]", *(f"{k} = {json.dumps(v)}" for k, v in config.items()), "", _pytest_options()]
    (stage / "pyproject.toml").write_text("\n".join(lines))
    if not fresh and (mutants / "tests").exists():  # re-trying survivors: the tests may have changed
        shutil.rmtree(mutants / "tests")
        shutil.copytree(tests, mutants / "tests")
    return stage


def _meta(stage: Path, target: Target) -> dict[str, int | None]:
    path = stage / "mutants" / "src" / "qlab" / (target.source + ".meta")
    data = json.loads(path.read_text())
    return dict(data["exit_code_by_key"])


def _status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code

    return str(status_by_exit_code[code])


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
path, names = sys.argv[1], sys.argv[2:]
print(json.dumps({n: get_diff_for_mutant(n, path=path) for n in names}))
"""


def _diffs(stage: Path, target: Target, mutants: list[str]) -> dict[str, str]:
    """Each mutant's change as ``-``/``+`` lines (one process for all: ``mutmut show`` per mutant is slow)."""
    if not mutants:
        return {}
    done = subprocess.run([sys.executable, "-c", _DIFFS, f"src/qlab/{target.source}", *mutants], cwd=stage,
                          capture_output=True, text=True, check=True)  # fmt: skip
    out = {}
    for name, diff in json.loads(done.stdout).items():
        lines = [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
        out[name] = "\n".join(lines)
    return out


def _commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "runner", "tests"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()  # fmt: skip
    return head.stdout.strip() + ("+uncommitted" if dirty else "")


# mutmut's first pass ("stats": which test reaches which function) records each hit with a config read from the
# current folder; a subprocess a test starts elsewhere (``qlab run`` in a tmp folder) would crash on it. Its hits
# are lost anyway (another process), so there it records none; mutants are still tried in it (PYTHONPATH).
_SITE = """import os
if os.environ.get("MUTANT_UNDER_TEST") == "stats" and os.getcwd() != os.environ.get("QLAB_MUTATION_STAGE"):
    os.environ["MUTMUT_DEPENDENCY_DEPTH"] = "0"
"""

# A module-level cache (functools.lru_cache) lies to mutmut twice: its stats pass runs every test in one process,
# so a test whose scrubber was built by an earlier test is never recorded as reaching Scrubber.__init__ or
# secret_variants; and the workers it forks after the clean run inherit objects the unmutated code built. Every
# test starts with the mutated module's caches empty.
_PLUGIN = """import os, sys
def pytest_runtest_setup(item):
    module = sys.modules.get(os.environ.get("QLAB_MUTATION_MODULE", ""))
    for value in list(vars(module).values()) if module else ():
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            clear()
"""


def run(name: str, *, max_children: int, survivors_only: bool, tests_at: str | None = None) -> dict[str, Any]:
    target = MODULES[name]
    stage = _stage(name, target, fresh=not survivors_only, tests_at=tests_at)
    site = stage / "site"  # sitecustomize for the subprocesses the tests start (see _SITE)
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITE)
    (site / "qlab_mutation_plugin.py").write_text(_PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(stage / "mutants" / "src"), str(site)))}
    env["QLAB_MUTATION_STAGE"] = str(stage)
    env["QLAB_MUTATION_MODULE"] = "qlab." + target.source.removesuffix(".py").replace("/", ".")
    env.pop("CI", None)  # the suite's CI-only strictness is not what is measured here
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)]
    if survivors_only:
        previous = json.loads((stage / "summary.json").read_text())
        cmd += [s["mutant"] for s in previous["survivors"]]
        if not previous["survivors"]:
            return previous
    load = os.getloadavg()
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=stage, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    (stage / "mutmut.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{name}: mutmut failed (exit {done.returncode}); see {stage / 'mutmut.log'}")
    codes = _meta(stage, target)
    counts: dict[str, int] = {}
    for code in codes.values():
        counts[_status(code)] = counts.get(_status(code), 0) + 1
    considered = len(codes) - counts.get("skipped", 0)
    killed = sum(n for s, n in counts.items() if s in KILLED)
    survivors = sorted((m for m, c in codes.items() if _status(c) not in KILLED | {"skipped"}),
                       key=lambda m: int(m.rpartition("_")[2]))  # fmt: skip
    diffs = _diffs(stage, target, survivors)
    summary: dict[str, Any] = {
        "module": name,
        "source": f"runner/qlab/{target.source}",
        "tests": list(target.tests),
        "commit": _commit(),
        "tests_at": tests_at or "worktree",
        "mutants": considered,
        "killed": killed,
        "score": round(killed / considered, 4) if considered else None,
        "counts": counts,
        "seconds": round(seconds, 1),
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "max_children": max_children,
        "survivors": [{"mutant": m, "status": _status(codes[m]), "diff": diffs[m]} for m in survivors],
    }
    if survivors_only:
        summary["note"] = "re-tried the previous survivors only; the others keep their earlier result"
    (stage / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def table() -> str:
    rows = ["| module | mutants | killed | score | survivors | tests tried | seconds | load (1 min) | commit |",
            "|---|---:|---:|---:|---:|---|---:|---|---|"]  # fmt: skip
    for name in MODULES:
        path = STAGES / name.replace("/", "-") / "summary.json"
        if not path.exists():
            continue
        s = json.loads(path.read_text())
        rows.append(
            f"| `{s['source'].removeprefix('runner/qlab/')}` | {s['mutants']} | {s['killed']} | "
            f"{s['score'] * 100:.1f} % | {len(s['survivors'])} | {', '.join(s['tests'])} | {s['seconds']} | "
            f"{s['load_before'][0]} → {s['load_after'][0]} | {s['commit']} |"
        )
    return "\n".join(rows)


def main() -> None:
    # A shell's background job (`cmd &`) starts Python with SIGINT ignored, and an ignored signal stays ignored
    # across exec: mutmut's first pass would then fail the pool's Ctrl-C test. A handler here is reset to the
    # default in every process started below.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("modules", nargs="*", help="module names as --list shows them")
    parser.add_argument("--all", action="store_true", help="every module, one at a time")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--table", action="store_true", help="print the table of the last runs")
    parser.add_argument("--survivors", action="store_true", help="re-try only the previous run's survivors")
    parser.add_argument("--max-children", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument(
        "--tests-at", metavar="REF", help="try the tests committed at REF (a baseline), not the worktree's"
    )
    args = parser.parse_args()
    if args.list:
        for name, target in MODULES.items():
            print(f"{name:22} runner/qlab/{target.source:34} {' '.join(target.tests)}")
        return
    if args.table:
        print(table())
        return
    names = list(MODULES) if args.all else args.modules
    unknown = [n for n in names if n not in MODULES]
    if unknown or not names:
        parser.error(f"name modules from --list (unknown: {', '.join(unknown) or 'none given'})")
    for name in names:
        s = run(name, max_children=args.max_children, survivors_only=args.survivors, tests_at=args.tests_at)
        print(f"{name}: {s['killed']}/{s['mutants']} killed ({s['score'] * 100:.1f} %), "
              f"{len(s['survivors'])} survivors, {s['seconds']} s, {s['counts']}", flush=True)  # fmt: skip
        for survivor in s["survivors"]:
            print(
                f"  {survivor['mutant']} [{survivor['status']}]\n    "
                + survivor["diff"].replace("\n", "\n    ")
            )


if __name__ == "__main__":
    main()

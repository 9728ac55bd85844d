"""Benchmark (by hand, not a test): the memory and time of loading a large project's case files, per phase.

Generates bench_run's project (100,000 search cases, 1,000 tools, as four YAML files or one JSON Lines file),
then, in a fresh process per measure, calls ``load_project`` after the imports a run makes and reports the RSS
before and after it, the high-water mark during it, and its wall time. ``--against DIR`` measures another
checkout's ``runner`` folder in turns with this one (before/after, interleaved), with the load averages::

    python bench/bench_load_memory.py                                # 100,000 cases, 4 YAML files, 3 rounds
    python bench/bench_load_memory.py --jsonl --against /tmp/main/runner
    python bench/bench_load_memory.py --trace --cases 20000          # tracemalloc: live data and its peak

What is not loading (the search stage, the outputs) is measured by ``bench_run.py --whole``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(field))
from qlab.project.load import load_project
import qlab.run  # the imports of a run, so "before" is what a run has before it loads
trace = sys.argv[2] == "trace"
if trace:
    import tracemalloc
    tracemalloc.start(1)
before = status("VmRSS")
start = time.perf_counter()
project = load_project(sys.argv[1], environ={})
seconds = time.perf_counter() - start
print(f"{len(project.cases)} cases, load {seconds:.2f} s, RSS before {before:.1f} MiB, after {status('VmRSS'):.1f} "
      f"MiB, high-water mark {status('VmHWM'):.1f} MiB")
if trace:
    current, peak = tracemalloc.get_traced_memory()
    print(f"tracemalloc: live {current / 2**20:.1f} MiB ({current / len(project.cases):.0f} B a case), "
          f"peak {peak / 2**20:.1f} MiB")
    for stat in tracemalloc.take_snapshot().statistics("lineno")[:10]:
        print(f"  {stat}")
"""


def load_average() -> str:
    with open("/proc/loadavg", encoding="ascii") as handle:
        return "load average " + " ".join(handle.read().split()[:3])


def measure(config: Path, runner: Path, *, trace: bool) -> str:
    env = {**os.environ, "PYTHONPATH": str(runner)}
    argv = [sys.executable, "-c", CHILD, str(config), "trace" if trace else "-"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else f"failed: {done.stderr.strip()[-500:]}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--yaml-files", type=int, default=4)
    parser.add_argument("--jsonl", action="store_true", help="one JSON Lines file instead of YAML files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout's runner folder, measured in turns")
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the child (slow: ~30x)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_run import generate

    sides = {"this checkout": ROOT / "runner"}
    if args.against is not None:
        sides = {"against": args.against.resolve(), **sides}
    with tempfile.TemporaryDirectory(prefix="qlab-bench-") as tmp:
        config = generate(
            Path(tmp), cases=args.cases, tools=1_000, yaml_files=0 if args.jsonl else args.yaml_files
        )
        kind = "one JSON Lines file" if args.jsonl else f"{args.yaml_files} YAML files"
        print(f"### load_project of {args.cases:,} search cases from {kind}, {args.rounds} rounds\n")
        print(load_average())
        for round_ in range(args.rounds):
            for name, runner in sides.items():
                print(f"round {round_ + 1}, {name}: {measure(config, runner, trace=args.trace)}", flush=True)
        print(load_average())


if __name__ == "__main__":
    main()

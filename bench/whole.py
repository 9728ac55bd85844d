"""Whole-process measurement for the benchmarks: what a CI job waits for, not what one stage takes.

Every side of a comparison is a real process started from here (``qlab run`` itself, a raw httpx loop, a peer
tool), measured from the outside:

- wall time from just before the spawn to the moment ``os.wait4`` returns (interpreter start, imports,
  teardown and all);
- the child's own CPU time, from the ``rusage`` that ``wait4`` returns for that child alone;
- its peak RSS from GNU time (``/usr/bin/time -f %M``, which starts the command): ``wait4``'s ``ru_maxrss``
  is not the command's own, since Linux carries the memory a child had before ``exec`` (a copy of the
  benchmark's own pages at the fork) into it, so a large benchmark process floors every side at its own size.
  Without GNU time the figure is ``ru_maxrss`` and the tables say so (``rss_source``);
- for qlab, the phase split: ``QLAB_TIMINGS`` makes qlab append a timestamp at the end of each phase
  (``qlab.commands._timings``), counted from ``QLAB_TIMINGS_T0``, the time of the spawn, so the phases add up
  to the wall time: start + imports, loading, each gate, artifact, outputs, teardown.

Sides run in turns (a, b, a, b, ...) so a change in the machine's load falls on every side alike; each round
gives a paired ratio, and the figure reported is the median of those ratios (with the median and best wall
times beside it). Load averages are taken before and after.

Bytecode: this machine sets ``PYTHONDONTWRITEBYTECODE``; children get a private ``PYTHONPYCACHEPREFIX`` so
they load compiled modules as an installed wheel would (the first, warm-up, round fills it).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QLAB = [sys.executable, "-m", "qlab"]
GNU_TIME = Path("/usr/bin/time")  # Debian's ``time`` package: prints the command's own peak RSS (``%M``, KiB)

# the phases qlab marks, in order, with the label the tables use
PHASE_LABELS: dict[str, str] = {
    "cli": "interpreter + cli",
    "imports": "command imports",
    "load": "load config + cases",
    "artifact": "artifact",
    "outputs": "outputs",
    "exit_called": "return to exit",
}


@dataclass
class Measured:
    """One process: wall and CPU seconds, peak RSS, exit code, qlab's phase marks (seconds from the spawn)."""

    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    exit_code: int
    rss_source: str = "GNU time"  # or "ru_maxrss" (floored at the benchmark's own size: see the docstring)
    phases: list[tuple[str, float]] = field(default_factory=list)
    stdout: str = ""

    def split(self) -> dict[str, float]:
        """Durations of the phases, in order, ending with ``teardown`` (last mark → the process is gone)."""
        out: dict[str, float] = {}
        last = 0.0
        for phase, at in self.phases:
            out[phase] = at - last
            last = at
        if self.phases:
            out["teardown"] = self.wall_s - last
        return out


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "qlab-bench-pycache"))
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CI"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def measure(
    cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, timings: bool = True
) -> Measured:
    """Run ``cmd`` to completion and measure it from the outside (see the module docstring)."""
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False) as marks:
        marks_path = marks.name
    extra = dict(env or {})
    rss_path = marks_path + ".rss"
    gnu_time = _has_gnu_time()
    argv = [str(GNU_TIME), "-f", "%M", "-o", rss_path, *cmd] if gnu_time else list(cmd)
    started = time.time()
    if timings:
        extra.update(QLAB_TIMINGS=marks_path, QLAB_TIMINGS_T0=repr(started))
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=_env(extra), stdout=out, stderr=subprocess.STDOUT, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)  # GNU time's rusage includes the command it waited for
        wall = time.time() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    phases: list[tuple[str, float]] = []
    for line in Path(marks_path).read_text(encoding="utf-8").splitlines():
        mark = json.loads(line)
        phases.append((str(mark["phase"]), float(mark["t"])))
    os.unlink(marks_path)
    peak_kib, source = float(usage.ru_maxrss), "ru_maxrss"
    if gnu_time:
        peak_kib, source = float(Path(rss_path).read_text(encoding="utf-8").split()[-1]), "GNU time"
        os.unlink(rss_path)
    return Measured(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=peak_kib / 1024,
        exit_code=proc.returncode,
        phases=phases,
        stdout=text,
        rss_source=source,
    )


@functools.cache
def _has_gnu_time() -> bool:
    """Whether ``/usr/bin/time`` is GNU time (``-f``, ``-o``, ``%M``): asked once a process, outside any timing."""
    if not GNU_TIME.is_file():
        return False
    done = subprocess.run([str(GNU_TIME), "--version"], capture_output=True, text=True, check=False)
    return "GNU" in done.stdout + done.stderr


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Comparison:
    """Rounds of interleaved runs: each side's measurements, in round order."""

    runs: dict[str, list[Measured]]
    load_before: str
    load_after: str

    def median_wall(self, name: str) -> float:
        return statistics.median(m.wall_s for m in self.runs[name])

    def best_wall(self, name: str) -> float:
        return min(m.wall_s for m in self.runs[name])

    def ratio(self, name: str, baseline: str, key: str = "wall_s") -> float:
        """Median of the per-round ratios name / baseline (rounds are paired: same moment, same load)."""
        pairs = zip(self.runs[name], self.runs[baseline], strict=True)
        return statistics.median(getattr(a, key) / getattr(b, key) for a, b in pairs)

    def peak_rss(self, name: str) -> float:
        return max(m.peak_rss_mib for m in self.runs[name])

    def median_split(self, name: str) -> dict[str, float]:
        splits = [m.split() for m in self.runs[name]]
        keys = list(dict.fromkeys(k for s in splits for k in s))
        return {k: statistics.median(s.get(k, 0.0) for s in splits) for k in keys}

    def table(self, baseline: str) -> str:
        """A Markdown table: median and best wall, x baseline (median of paired ratios), CPU, peak RSS."""
        lines = [
            f"| side | median wall | best wall | x {baseline} (paired median) | CPU x {baseline} | CPU s | peak RSS |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, runs in self.runs.items():
            cpu = statistics.median(m.cpu_s for m in runs)
            lines.append(
                f"| {name} | {self.median_wall(name):.3f} s | {self.best_wall(name):.3f} s | "
                f"{self.ratio(name, baseline):.2f} | {self.ratio(name, baseline, 'cpu_s'):.2f} | {cpu:.3f} | "
                f"{self.peak_rss(name):.1f} MiB{'' if runs[0].rss_source == 'GNU time' else ' (ru_maxrss)'} |"
            )
        return "\n".join(lines)

    def show(self, title: str, baseline: str) -> None:
        """Print ``### title``, the load averages before and after, ``table(baseline)`` and the phase split of
        every side that marked its phases (qlab's)."""
        print(f"\n### {title}\n")
        print(f"{self.load_before} -> {self.load_after}\n")
        print(self.table(baseline))
        for name, runs in self.runs.items():
            if runs[0].phases:
                print()
                print(self.split_table(name))

    def save(self, path: Path | None) -> None:
        """Write ``to_json()`` to ``path`` (nothing when None)."""
        if path is not None:
            path.write_text(json.dumps(self.to_json(), indent=1), encoding="utf-8")

    def split_table(self, name: str) -> str:
        split = self.median_split(name)
        total = sum(split.values()) or 1.0
        lines = [f"| phase of {name} (median) | seconds | share |", "|---|---|---|"]
        for phase, secs in split.items():
            label = PHASE_LABELS.get(phase, phase)
            lines.append(f"| {label} | {secs:.3f} | {secs / total:.0%} |")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "load_before": self.load_before,
            "load_after": self.load_after,
            "runs": {
                name: [
                    {
                        "wall_s": m.wall_s,
                        "cpu_s": m.cpu_s,
                        "peak_rss_mib": m.peak_rss_mib,
                        "exit_code": m.exit_code,
                        "split": m.split(),
                    }
                    for m in runs
                ]
                for name, runs in self.runs.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Comparison:
        """A comparison back from ``to_json`` (each process's phase marks rebuilt from its split)."""
        runs: dict[str, list[Measured]] = {}
        for name, rows in data["runs"].items():
            runs[name] = []
            for row in rows:
                marks, at = [], 0.0
                for phase, seconds in row["split"].items():
                    at += seconds
                    if phase != "teardown":
                        marks.append((phase, at))
                runs[name].append(
                    Measured(row["wall_s"], row["cpu_s"], row["peak_rss_mib"], row["exit_code"], phases=marks)
                )
        return cls(runs, str(data["load_before"]), str(data["load_after"]))


def interleave(
    sides: Mapping[str, Callable[[], Measured]],
    *,
    rounds: int,
    warmup: int = 1,
    check: Callable[[str, Measured], None] | None = None,
) -> Comparison:
    """``warmup`` unrecorded rounds, then ``rounds`` rounds of every side in turn."""
    for _ in range(warmup):
        for name, side in sides.items():
            measured = side()
            if check is not None:
                check(name, measured)
    before = load_average()
    runs: dict[str, list[Measured]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, side in sides.items():
            measured = side()
            if check is not None:
                check(name, measured)
            runs[name].append(measured)
    return Comparison(runs, before, load_average())


def expect_exit(code: int) -> Callable[[str, Measured], None]:
    def check(name: str, measured: Measured) -> None:
        if measured.exit_code != code:
            sys.exit(f"{name} exited {measured.exit_code}, expected {code}:\n{measured.stdout[-2000:]}")

    return check

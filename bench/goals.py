"""The performance rails, measured in one sitting, as the one table of bench/RESULTS.md.

    python bench/goals.py                     # every rail with its rounds of record; prints the table
    python bench/goals.py --write             # ... and puts its rows into bench/RESULTS.md
    python bench/goals.py --only nginx search --write    # these rails' rows; the others' rows stay as they are
    python bench/goals.py --smoke --write     # one round each: proves the benchmarks run, rows marked smoke

| rail | benchmark | baseline (a whole process too) |
|---|---|---|
| nginx: ``qlab run`` of 2,000 read cases <= 2.2x, <= 64 MiB | ``bench_nginx.py`` | a raw httpx loop |
| scale: ``qlab run`` of 100,000 YAML search cases <= 30 s, <= 500 MiB | ``bench_scale.py`` | (absolute) |
| search: ``qlab run`` of an API's generated search suite <= 2x | ``bench_api_search.py`` | bm25s, same text |
| validate: ``qlab validate`` of 2,000 case files <= 3x | ``bench_validate.py`` | a bare CSafeLoader read |

Each rail runs its benchmark's sides in turns after a warm-up round (``bench/whole.py``). The ratio is the
median of the per-round ratios, the time the median wall time, the memory the largest peak RSS of the rounds.
Figures of record come from an idle machine: each row gives its date, the load average around it and the
commit measured (``+`` when the tree had changes).
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import astuple, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_api_search
import bench_nginx
import bench_scale
import bench_validate
from whole import Comparison

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BEGIN, END = "<!-- goals.py: begin -->", "<!-- goals.py: end -->"
HEADER = (
    "| goal / command | figure | baseline | ratio | rail | verdict | date | commit |\n"
    "|---|---|---|---|---|---|---|---|"
)


@dataclass(frozen=True)
class Row:
    """One line of the table; ``goal`` starts with the rail's name in bold (how ``--only`` finds its rows)."""

    goal: str
    figure: str
    baseline: str
    ratio: str
    rail: str
    verdict: str
    date: str
    commit: str

    def markdown(self) -> str:
        return "| " + " | ".join(astuple(self)) + " |"


@dataclass(frozen=True)
class Sitting:
    """What every row of one run of this script shares."""

    rounds: dict[str, int]  # rail -> rounds used
    commit: str

    def date(self, comparison: Comparison) -> str:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        loads = [comparison.load_before, comparison.load_after]
        return f"{now}, load {' → '.join(x.removeprefix('load average ').split()[0] for x in loads)}"

    def verdict(self, rail: str, *met: bool) -> str:
        verdict = "met" if all(met) else "**not met**"
        if self.rounds[rail] < ROUNDS[rail]:
            verdict += (
                f" (smoke: {self.rounds[rail]} round{'s' if self.rounds[rail] > 1 else ''}, not of record)"
            )
        return verdict


def _x(value: float) -> str:
    return f"{value:.2f}x"


def nginx_rows(sitting: Sitting) -> list[Row]:
    comparison = bench_nginx.compare(2000, sitting.rounds["nginx"], [None])
    name = "qlab run (concurrency default)"
    ratio, rss = comparison.ratio(name, bench_nginx.RAW), comparison.peak_rss(name)
    return [
        Row(
            "**nginx**: `qlab run`, 2,000 read cases against nginx (`bench_nginx.py`)",
            f"{comparison.median_wall(name):.2f} s, {rss:.1f} MiB",
            f"raw httpx loop {comparison.median_wall(bench_nginx.RAW):.2f} s",
            _x(ratio),
            "≤ 2.2x, ≤ 64 MiB",
            sitting.verdict("nginx", ratio <= 2.2, rss <= 64),
            sitting.date(comparison),
            sitting.commit,
        )
    ]


def scale_rows(sitting: Sitting) -> list[Row]:
    comparison = bench_scale.compare(100_000, 4, sitting.rounds["scale"])
    wall, rss = comparison.median_wall("qlab run"), comparison.peak_rss("qlab run")
    return [
        Row(
            "**scale**: `qlab run`, 100,000 search cases from 4 YAML files (`bench_scale.py`)",
            f"{wall:.1f} s, {rss:.0f} MiB",
            f"reading the files {comparison.median_wall(bench_scale.BASELINE):.1f} s",
            _x(comparison.ratio("qlab run", bench_scale.BASELINE)),
            "≤ 30 s, ≤ 500 MiB",
            sitting.verdict("scale", wall <= 30, rss <= 500),
            sitting.date(comparison),
            sitting.commit,
        )
    ]


def search_rows(sitting: Sitting) -> list[Row]:
    rows = []
    for api in ("kubernetes", "spotify", "petstore"):
        comparison, queries = bench_api_search.compare(api, sitting.rounds["search"])
        ratio = comparison.ratio("qlab run", bench_api_search.BASELINE)
        rows.append(
            Row(
                f"**search**: `qlab run`, {api}'s {queries:,} generated queries (`bench_api_search.py`)",
                f"{comparison.median_wall('qlab run'):.2f} s, {comparison.peak_rss('qlab run'):.0f} MiB",
                f"bm25s {comparison.median_wall(bench_api_search.BASELINE):.2f} s",
                _x(ratio),
                "≤ 2x",
                sitting.verdict("search", ratio <= 2),
                sitting.date(comparison),
                sitting.commit,
            )
        )
    return rows


def validate_rows(sitting: Sitting) -> list[Row]:
    comparison = bench_validate.compare(2000, sitting.rounds["validate"])
    ratio = comparison.ratio("qlab validate", bench_validate.BASELINE)
    return [
        Row(
            "**validate**: `qlab validate`, 2,000 case files (`bench_validate.py`)",
            f"{comparison.median_wall('qlab validate'):.2f} s, {comparison.peak_rss('qlab validate'):.0f} MiB",
            f"CSafeLoader read {comparison.median_wall(bench_validate.BASELINE):.2f} s",
            _x(ratio),
            "≤ 3x",
            sitting.verdict("validate", ratio <= 3),
            sitting.date(comparison),
            sitting.commit,
        )
    ]


RAILS: dict[str, Callable[[Sitting], list[Row]]] = {
    "nginx": nginx_rows,
    "scale": scale_rows,
    "search": search_rows,
    "validate": validate_rows,
}
ROUNDS = {"nginx": 5, "scale": 2, "search": 5, "validate": 5}  # of record


def commit() -> str:
    """The commit measured, short, with ``+`` when the tree differs from it."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True
    )
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def rail_of(line: str) -> str | None:
    found = re.match(r"\| \*\*(\w+)\*\*", line)
    return found.group(1) if found else None


def write(rows: list[Row], measured: set[str]) -> None:
    """Replace the measured rails' rows of the table in RESULTS.md; the other rails' rows stay, in rail order."""
    text = RESULTS.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        sys.exit(f"{RESULTS}: the markers {BEGIN} and {END} are missing")
    before, _, rest = text.partition(BEGIN)
    table, _, after = rest.partition(END)
    kept = [line for line in table.splitlines() if rail_of(line) and rail_of(line) not in measured]
    lines = kept + [row.markdown() for row in rows]
    lines.sort(key=lambda line: list(RAILS).index(rail_of(line) or ""))
    RESULTS.write_text(
        f"{before}{BEGIN}\n{HEADER}\n" + "\n".join(lines) + f"\n{END}{after}", encoding="utf-8"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=list(RAILS), help="these rails only")
    parser.add_argument("--smoke", action="store_true", help="one round each (rows marked: not of record)")
    parser.add_argument("--write", action="store_true", help=f"put the rows into {RESULTS.name}")
    args = parser.parse_args(argv)
    names = args.only or list(RAILS)
    sitting = Sitting({name: 1 if args.smoke else ROUNDS[name] for name in RAILS}, commit())
    rows: list[Row] = []
    for name in names:
        print(f"# {name} ...", file=sys.stderr, flush=True)
        rows += RAILS[name](sitting)
    print(HEADER)
    print("\n".join(row.markdown() for row in rows))
    if args.write:
        write(rows, set(names))
        print(f"\nwrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

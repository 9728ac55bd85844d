"""``qlab merge <files|dir|glob> [--out DIR]``: shard results → one result, JUnit, summary and durations file.

Exit codes: the merged decision (0 pass, 1 block), 2 when the set is incomplete or inconsistent.
"""

from __future__ import annotations

import json

import click

from qlab.commands.examples import with_examples
from qlab.commands.render import check_ci_files, render_outcome
from qlab.run import artifact as artifact_io
from qlab.run import history
from qlab.run.merge import collect, merge
from qlab.run.outputs import OutputPaths, absolute, prepare, release, write_file, write_outputs
from qlab.run.shard import durations_of


@click.command(
    "merge",
    help="Merge the results of qlab run --shard i/N into one result, JUnit, summary and durations file.",
    epilog=with_examples("merge"),
)
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), help="Output folder (default: the shards' folder)."
)
@click.option("--exit-zero", is_flag=True, help="Advisory mode: exit 0 when blocked (still 2 on errors).")
@click.option("--quiet", "-q", is_flag=True, help="Only the decision.")
def command(inputs: tuple[str, ...], out_dir: str | None, exit_zero: bool, quiet: bool) -> int:
    files = collect(inputs)
    shards = [(path, artifact_io.read(path)) for path in files]
    merged = merge(shards, exit_zero=exit_zero)
    folder = absolute(out_dir if out_dir else files[0].parent)  # named like a run's outputs: absolute
    paths = OutputPaths(folder / "result.json", folder / "junit.xml", folder / "summary.md")
    prepare(paths)
    try:
        check_ci_files()
        kept = history.folder_of(paths.result)  # the merged runs' history, beside the merged result
        before = history.latest_brief(kept, like=merged)
        write_outputs(merged, paths, previous=before)
        history.keep(paths.result, str(merged.get("run_id")), kept)
        durations = durations_of(merged["cases"])
        write_file(folder / "durations.json", json.dumps(durations, indent=1, sort_keys=True) + "\n")
        render_outcome(merged, paths, quiet=quiet, previous=before)
    finally:
        release(paths)
    if not quiet:
        click.echo(f"durations: {folder / 'durations.json'} (use with qlab run --shard i/N --durations)")
    return int(merged["decision"]["exit_code"])

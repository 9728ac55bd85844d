"""``qlab propose-case``: turn a real failure of a result into an EvalCase proposal (pending review)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from qlab.commands.examples import with_examples
from qlab.contracts.results import to_json
from qlab.governance.env import project
from qlab.governance.learning.proposals import propose
from qlab.governance.records import load_artifact, write_json
from qlab.project import resolve


@click.command(
    "propose-case",
    help="Turn a failing case of a result into a regression case proposal.",
    epilog=with_examples("propose-case"),
)
@click.option(
    "--result",
    "result_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The result artifact with the failure.",
)
@click.option("--case", "case_id", required=True, help="The failing case's id.")
@click.option(
    "--corrected",
    "corrected_path",
    type=click.Path(dir_okay=False),
    help="A later result in which the case passed: the proposal records the key difference.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Where to write the proposal (default: learning.proposals_dir).",
)
@click.option("--description", default="", help="What the case guards against (default: the failure).")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the proposal.")
def command(
    result_path: str,
    case_id: str,
    corrected_path: str | None,
    out_dir: str | None,
    description: str,
    config_path: str | None,
    as_json: bool,
) -> int:
    loaded = project(config_path)
    case = next((c for c in loaded.cases if c.id == case_id), None)
    corrected = load_artifact(corrected_path) if corrected_path else None
    proposal = propose(
        load_artifact(result_path), case_id, case=case, corrected=corrected, description=description
    )
    folder = Path(out_dir) if out_dir else resolve(loaded.config, loaded.config.learning.proposals_dir)
    path = folder / f"{proposal['id']}.json"
    write_json(path, proposal)
    if as_json:
        click.echo(json.dumps(proposal, indent=2, ensure_ascii=False, default=to_json))
        return 0
    click.echo(f"proposal {proposal['id']} (pending review) written to {path}")
    click.echo(f"  {proposal['description']}")
    if "key_difference" in proposal:
        click.echo(f"  key difference: {proposal['key_difference']['summary']}")
    click.echo(f"accept it into the regression suite with: qlab accept-case {path} --by NAME")
    return 0

"""``qlab approve SKILL --result R --by NAME``: the human review, bound to the sha256 of the result reviewed."""

from __future__ import annotations

import click

from qlab.commands.examples import with_examples
from qlab.governance.env import project
from qlab.governance.records import load_artifact
from qlab.governance.release.skill import approve


@click.command(
    "approve",
    help="Record a human review of a result for a skill, bound to the result's digest.",
    epilog=with_examples("approve"),
)
@click.argument("skill_name", metavar="SKILL")
@click.option(
    "--result",
    "result_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The result artifact reviewed.",
)
@click.option("--by", "--reviewer", "by", required=True, help="Who reviewed it.")
@click.option(
    "--reject", is_flag=True, help="Record a rejection: the human review gate fails for this result."
)
@click.option(
    "--regenerate",
    is_flag=True,
    help="Ask for a new run before deciding: the human review gate fails for this result, and the scorecard's "
    "human_acceptance counts it as not accepted.",
)
@click.option("--note", default="", help="The reviewer's note.")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
def command(
    skill_name: str,
    result_path: str,
    by: str,
    reject: bool,
    note: str,
    config_path: str | None,
    regenerate: bool = False,
) -> int:
    if reject and regenerate:
        raise click.UsageError("--reject and --regenerate are two different decisions: give one")
    config = project(config_path).config
    artifact = load_artifact(result_path)
    decision = "rejected" if reject else "regenerate" if regenerate else "approved"
    entry = approve(config, skill_name, artifact, by=by, decision=decision, note=note)
    click.echo(
        f"{entry['decision']} {skill_name} for result {entry['result_digest']} by {entry['reviewer']} at {entry['at']}"
    )
    return 0

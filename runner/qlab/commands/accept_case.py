"""``qlab accept-case``: move an approved proposal into the (required) regression suite."""

from __future__ import annotations

from pathlib import Path

import click

from qlab.commands.examples import with_examples
from qlab.governance.learning.accept import accept_case
from qlab.project import find_config


@click.command(
    "accept-case",
    help="Move an approved proposal into the regression suite; every run must pass it from then on.",
    epilog=with_examples("accept-case"),
)
@click.argument("proposal", type=click.Path(dir_okay=False, exists=True))
@click.option("--by", "--reviewer", "by", required=True, help="Who approves it.")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
def command(proposal: str, by: str, config_path: str | None) -> int:
    config = Path(config_path) if config_path else find_config()
    accepted = accept_case(Path(proposal), config_path=config, by=by)
    click.echo(
        f"accepted: case {accepted.case_id} joins required suite {accepted.suite!r} in {accepted.file}"
    )
    if accepted.note:
        click.echo(f"note: {accepted.note}")
    return 0

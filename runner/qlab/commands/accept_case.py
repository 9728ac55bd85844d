"""``qlab accept-case``: move an approved proposal into the (required) regression suite, reject one, or move a
case through its lifecycle (draft → active → archived)."""

from __future__ import annotations

from pathlib import Path

import click

from qlab.commands.examples import with_examples
from qlab.governance.learning.accept import accept_case, reject_proposal, set_status
from qlab.governance.learning.sandbox import activation_check
from qlab.project import find_config


@click.command(
    "accept-case",
    help="Move an approved proposal into the regression suite (every run must pass it from then on), reject it, "
    "or set a case's lifecycle status with --case ID --status draft|active|archived.",
    epilog=with_examples("accept-case"),
)
@click.argument("proposal", required=False, type=click.Path(dir_okay=False, exists=True))
@click.option("--by", "--reviewer", "by", required=True, help="Who decides.")
@click.option(
    "--status",
    type=click.Choice(["active", "draft", "archived"]),
    default=None,
    help="With a proposal: active (default; it gates from the next run on) or draft (it runs and is reported, "
    "never gates). With --case: the case's new lifecycle status.",
)
@click.option("--case", "case_id", help="An existing case whose lifecycle status to set (with --status).")
@click.option("--reject", is_flag=True, help="Reject the proposal: nothing joins the regression suite.")
@click.option("--reason", default="", help="Why (recorded with a rejection).")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
def command(
    proposal: str | None,
    by: str,
    status: str | None,
    case_id: str | None,
    reject: bool,
    reason: str,
    config_path: str | None,
) -> int:
    config = Path(config_path) if config_path else find_config()
    if case_id is not None:
        if proposal is not None or reject or status is None:
            raise click.UsageError("--case takes --status (draft, active or archived) and no proposal")
        change = set_status(config, case_id, status, by=by, check=activation_check(config))
        click.echo(f"case {change.case_id}: {change.before} → {change.after} in {change.file}")
        return 0
    if proposal is None:
        raise click.UsageError("give a proposal file, or --case ID --status STATUS")
    if reject:
        done = reject_proposal(Path(proposal), by=by, reason=reason)
        click.echo(f"rejected proposal {done['id']}: nothing joins the regression suite")
        return 0
    if status == "archived":
        raise click.UsageError("a proposal is accepted as active or draft")
    accepted = accept_case(
        Path(proposal), config_path=config, by=by, status=status or "active", check=activation_check(config)
    )
    if (status or "active") == "draft":
        click.echo(
            f"accepted: case {accepted.case_id} joins suite {accepted.suite!r} as a draft in {accepted.file} "
            "(it runs and is reported, never gates)"
        )
    else:
        click.echo(
            f"accepted: case {accepted.case_id} joins required suite {accepted.suite!r} in {accepted.file}"
        )
    if accepted.note:
        click.echo(f"note: {accepted.note}")
    return 0

"""``qlab promote``: compare a baseline and a candidate result under the promotion rule of a change type.

Exit 0 promote, 1 block, 2 the runs cannot be compared (or bad input). Markdown goes to stdout (and to
``$GITHUB_STEP_SUMMARY`` in Actions); ``--json`` prints the JSON report instead, ``--json-out FILE`` also
writes it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from qlab.commands.examples import with_examples
from qlab.contracts.results import json_or_text
from qlab.governance.env import optional_config
from qlab.governance.learning import suggestions
from qlab.governance.promotion.bootstrap import DEFAULT_SEED
from qlab.governance.promotion.compare import compare
from qlab.governance.promotion.report import markdown
from qlab.governance.promotion.rules import CHANGE_TYPES, rule_for
from qlab.governance.records import load_artifact, write_text


@click.command(
    "promote",
    help="Compare a baseline and a candidate run under a promotion rule (0 promote, 1 block, 2 not comparable).",
    epilog=with_examples("promote"),
)
@click.option(
    "--baseline",
    required=True,
    type=click.Path(dir_okay=False),
    help="The baseline result artifact (e.g. main's result.json).",
)
@click.option(
    "--candidate", required=True, type=click.Path(dir_okay=False), help="The candidate result artifact."
)
@click.option(
    "--change",
    "change_type",
    required=True,
    metavar="TYPE",
    help=f"The change type: {', '.join(CHANGE_TYPES)} (or one of qlab.yaml's promotion rules).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="qlab.yaml with the promotion rules (default: searched upwards; the built-in rules without one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout instead of text.")
@click.option(
    "--json-out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the JSON report to this file (the Markdown is still printed).",
)
@click.option(
    "--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the paired bootstrap."
)
def command(
    baseline: str,
    candidate: str,
    change_type: str,
    config_path: str | None,
    as_json: bool,
    json_out: str | None,
    seed: int,
) -> int:
    config = optional_config(config_path)
    rule = rule_for(change_type, config)
    # shadow_improves may rest on the suggestions accepted from the baseline run (`qlab learn shadow`)
    reviewed = (
        suggestions.load(suggestions.suggestions_path(config))
        if config is not None and "shadow_improves" in rule.require
        else []
    )
    report = compare(
        load_artifact(baseline),
        load_artifact(candidate),
        change_type=change_type,
        rule=rule,
        seed=seed,
        reviewed=reviewed,
    )
    text = markdown(report)
    if as_json or json_out:  # the JSON report of two large runs takes seconds: made only when asked for
        data = json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=json_or_text) + "\n"
        if json_out:
            write_text(Path(json_out), data)
    click.echo(data if as_json else text, nl=not as_json)
    if report.verdict == "refused":
        click.echo("error: the runs cannot be compared: " + "; ".join(report.reasons), err=True)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(_capped(text) + "\n")
    return report.exit_code


def _capped(text: str, limit: int = 1024 * 1024 - 200) -> str:
    """GitHub refuses a step summary over its size cap (``limit`` leaves room for the note): keep the head and
    say so."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return (
        raw[:limit].decode("utf-8", errors="ignore")
        + "\n\n… truncated at 1 MiB; the JSON report has everything.\n"
    )

"""``qlab release SKILL``: the pre-run checks (bindings, policy), then the skill's five release gates in order;
0 published, 1 draft, 2 a pre-run check failed (nothing judged)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from qlab.commands.examples import with_examples
from qlab.contracts.errors import InputError
from qlab.contracts.results import json_or_text
from qlab.governance.env import collection_and_engines, default_result, project
from qlab.governance.records import load_artifact, write_text
from qlab.governance.release import prerun
from qlab.governance.release.skill import approvals_path, evaluate, load_approvals, record, skill_named


@click.command(
    "release",
    help="Run a skill's five release gates (trigger, functional, policy, regression, human review).",
    epilog=with_examples("release"),
)
@click.argument("skill_name", metavar="SKILL")
@click.option(
    "--result",
    "result_path",
    type=click.Path(dir_okay=False),
    help="The evaluated result artifact (default: the last `qlab run` output).",
)
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the release outcome as JSON on stdout instead of text."
)
@click.option(
    "--json-out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the release outcome as JSON to this file.",
)
def command(
    skill_name: str,
    result_path: str | None,
    config_path: str | None,
    as_json: bool,
    json_out: str | None,
) -> int:
    loaded = project(config_path)
    config = loaded.config
    skill = skill_named(config, skill_name)
    path = Path(result_path) if result_path else default_result(config)
    # without a result the first three gates still run; regression and human review will say what is missing
    artifact = load_artifact(path) if result_path or path.is_file() else None
    collection, factory = collection_and_engines(config)
    failed = [
        c
        for c in prerun.checks(skill, config=config, collection=collection, artifact=artifact)
        if not c.passed
    ]
    if failed:
        lines = [
            f"pre-run check {c.name} failed ({c.reason}):\n  {c.message.replace(chr(10), chr(10) + '  ')}"
            for c in failed
        ]
        raise InputError("\n".join([*lines, f"nothing was judged: {skill.name} keeps its status (ERROR)"]))
    suite = skill.regression_suite or config.learning.regression_suite
    outcome = evaluate(
        skill,
        config=config,
        collection=collection,
        engine=factory(collection),
        artifact=artifact,
        suite_cases=loaded.cases_for(suite) if suite else (),
        approvals=load_approvals(approvals_path(config, skill)),
    )
    record_file = record(config, outcome)
    data = json.dumps(outcome.to_dict(), indent=2, ensure_ascii=False, default=json_or_text) + "\n"
    if json_out:
        write_text(Path(json_out), data)
    if as_json:
        click.echo(data, nl=False)
        return outcome.exit_code
    for gate in outcome.gates:
        mark = {"passed": "pass", "failed": "FAIL", "skipped": "skip"}[gate.status]
        click.echo(f"{mark:4}  {gate.name}" + (f": {'; '.join(gate.reasons)}" if gate.reasons else ""))
    where = f" (failed at {outcome.failed_gate})" if outcome.failed_gate else ""
    click.echo(f"{skill.name}: {outcome.status}{where}; recorded in {record_file}")
    return outcome.exit_code

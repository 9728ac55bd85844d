"""``qlab schema [NAME]``: print one of qlab's JSON Schemas (draft-07), or list the names it accepts. The case
schema printed is the one qlab validates with: the shipped file and the assertion types of installed plugin
packages."""

from __future__ import annotations

import json

import click

from qlab.commands.examples import with_examples
from qlab.contracts.resources import SCHEMA_FILES, load_schema

# every name of SCHEMA_FILES, with what the schema describes (a test keeps the two in step)
ABOUT: dict[str, str] = {
    "config": "qlab.yaml",
    "case": "case files (a case, a list of cases, JSON Lines)",
    "result": "the result artifact of qlab run and qlab merge (result.json)",
    "collection": "the collection artifact of qlab build (collection.json)",
    "proposal": "a regression case proposal of qlab propose-case",
    "release-record": "the release records qlab release keeps",
    "suggestions": "the learning suggestions file of qlab learn",
    "engine-request": "a request qlab sends to an HTTP engine (engine.type: http)",
    "engine-response": "the answer an HTTP engine sends back",
}


def listing() -> str:
    """One line per schema: its name and what it describes."""
    width = max(len(name) for name in SCHEMA_FILES)
    return "\n".join(f"{name.ljust(width)}  {ABOUT.get(name, SCHEMA_FILES[name])}" for name in SCHEMA_FILES)


@click.command(
    "schema",
    help="Print the JSON Schema NAME; without NAME, list the names. Point your editor at a schema, or validate "
    "your own tooling's output with it.\n\n\b\nNAMES:\n"
    + "\n".join(f"  {line}" for line in listing().splitlines()),
    epilog=with_examples("schema"),
)
@click.argument("name", type=click.Choice(list(SCHEMA_FILES)), required=False, metavar="[NAME]")
def command(name: str | None) -> int:
    if name is None:
        click.echo(listing())
        return 0
    click.echo(json.dumps(load_schema(name), indent=2, ensure_ascii=False))
    return 0

"""``qlab schema NAME``: print one of qlab's JSON Schemas (draft-07), e.g. config, case, result, collection."""

from __future__ import annotations

import click

from qlab.resources import SCHEMA_FILES, schema_path


@click.command("schema")
@click.argument("name", type=click.Choice(sorted(SCHEMA_FILES)))
def command(name: str) -> int:
    """Print the JSON Schema NAME: config (qlab.yaml), case (case files), result (the result artifact) or
    collection (the collection artifact). Point your editor at it, or validate your own tooling's output."""
    click.echo(schema_path(name).read_text(encoding="utf-8"), nl=False)
    return 0

"""``qlab init [DIR]``: scaffold a working project (the demo, or a starter for your own OpenAPI document)."""

from __future__ import annotations

from pathlib import Path

import click

from qlab.errors import InputError


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--from-openapi",
    "spec",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Start from your own OpenAPI 3.x / Swagger 2.0 file: one search case per operation.",
)
def command(directory: Path, force: bool, spec: Path | None) -> int:
    """Create qlab.yaml, gates/ and schemas/ in DIRECTORY (default: here).

    Without --from-openapi this is the member-delivery demo project (with a copy of its openapi.yaml); it
    passes `qlab validate` as created, and `qlab run` gates the bundled demo server.
    """
    from qlab.project import scaffold

    if spec is None:
        files = scaffold.demo_files()
    else:
        from qlab.collection.openapi import load_tools

        tools = load_tools(str(spec))
        if not tools:
            # a starter with an empty case file would fail its own `qlab validate`
            raise InputError(
                f"{spec}: the spec has no operations under `paths`: there is nothing to write search cases for"
            )
        kind = "swagger" if tools and tools[0].kind == "swagger" else "openapi"
        files = scaffold.openapi_files(spec, tools, target=directory, kind=kind)
    written = scaffold.write_files(directory, files, force=force)
    for path in written:
        click.echo(f"created {path}")
    click.echo(f"next: cd {directory} && qlab validate" if directory != Path(".") else "next: qlab validate")
    return 0

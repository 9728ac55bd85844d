"""``qlab init [DIR]``: scaffold a working project (the demo, or a measured starter for your own OpenAPI spec)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from qlab.commands.examples import with_examples

if TYPE_CHECKING:
    from qlab.run.starter import StarterOutcome


@click.command("init", epilog=with_examples("init"))
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--from-openapi",
    "spec",
    metavar="FILE|URL",
    default=None,
    help="Start from your own OpenAPI 3.x / Swagger 2.0 spec (a file, or a URL downloaded once): it is copied "
    "into specs/, and the gates' thresholds are measured on it.",
)
@click.option(
    "--base-url",
    metavar="URL",
    default=None,
    help="With --from-openapi: where the API answers (default: the spec's first server).",
)
@click.option(
    "--live",
    is_flag=True,
    help="With --from-openapi: measure the execute suite against the spec's own server (or "
    "<PREFIX>_BASE_URL). Without --live or --base-url, init sends no request to the API.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="With --from-openapi: send no request to the API even with --base-url or --live; the execute "
    "suite is written but not gated.",
)
@click.option(
    "--header",
    "headers",
    metavar="'NAME: VALUE'",
    multiple=True,
    help="With --from-openapi URL: a header for the spec's fetch (repeatable), e.g. 'Authorization: Bearer …'. "
    "Never written to any file.",
)
@click.option(
    "--header-env",
    "headers_env",
    metavar="NAME=VARIABLE",
    multiple=True,
    help="With --from-openapi URL: a header for the spec's fetch whose value is read from the environment "
    "variable VARIABLE (repeatable); qlab.yaml names the variable when the spec is fetched again by each build.",
)
@click.option(
    "--allow-remote-refs",
    is_flag=True,
    help="With --from-openapi: let the spec's $refs fetch other documents by URL (only for a spec you trust).",
)
def command(
    directory: Path,
    force: bool,
    spec: str | None,
    base_url: str | None,
    live: bool,
    offline: bool,
    headers: tuple[str, ...],
    headers_env: tuple[str, ...],
    allow_remote_refs: bool,
) -> int:
    """Create qlab.yaml, gates/ and schemas/ in DIRECTORY (default: here).

    Without --from-openapi this is the member-delivery demo project (with a copy of its openapi.yaml); it
    passes `qlab validate` as created, and `qlab run` gates the bundled demo server.

    With --from-openapi, qlab runs the new project's gates once and writes their thresholds at the figures it
    measured (rounded down): the first `qlab run` on the unchanged spec passes, and a regression blocks.
    Build and search read only the pinned spec; the execute suite is measured against a server only when you
    name one (--base-url, or --live for the spec's own), and init says which host it contacts first.
    """
    if spec is None:
        if base_url is not None or offline or live or headers or headers_env or allow_remote_refs:
            raise click.UsageError(
                "--base-url, --live, --offline, --header, --header-env and --allow-remote-refs go with "
                "--from-openapi"
            )
        from qlab.project import scaffold

        for path in scaffold.write_files(directory, scaffold.demo_files(), force=force):
            click.echo(f"created {path}")
    else:
        from qlab.run.starter import init_from_openapi

        outcome = init_from_openapi(
            spec,
            target=directory,
            base_url=base_url,
            live=live,
            offline=offline,
            force=force,
            headers=dict(_header(h) for h in headers),
            headers_env=dict(_header_env(h) for h in headers_env),
            remote_refs=allow_remote_refs,
            progress=lambda message: click.echo(message, err=True),
        )
        for path in outcome.written:
            click.echo(f"created {path}")
        click.echo(render(outcome))
    step = "qlab validate" if spec is None else "qlab run"
    click.echo(f"next: cd {directory} && {step}" if directory != Path(".") else f"next: {step}")
    return 0


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _header(text: str) -> tuple[str, str]:
    """``'Name: value'`` → (name, value); the value is never echoed in a message."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _TOKEN.match(name) or not value or any(c in value for c in "\r\n\0"):
        raise click.BadParameter(
            f"give 'Name: value' (a header name such as Authorization, then its value on one line); got a "
            f"header named {name[:40]!r}",
            param_hint="--header",
        )
    return name, value


def _header_env(text: str) -> tuple[str, str]:
    """``Name=VARIABLE`` → (name, variable)."""
    name, equals, variable = (part.strip() for part in text.partition("="))
    if not equals or not _TOKEN.match(name) or not _VARIABLE.match(variable):
        raise click.BadParameter(
            f"give NAME=VARIABLE, e.g. Authorization=SPEC_TOKEN; got {text[:60]!r}", param_hint="--header-env"
        )
    return name, variable


def render(outcome: StarterOutcome) -> str:
    """What was measured and written, and what is not gated yet."""
    figures = outcome.figures
    search = figures.search.figures
    lines = []
    if not outcome.spec.pinned:
        lines.append(f"spec: not copied into the project: {outcome.spec.note}")
    shown = ", ".join(
        f"{name} {value:.3f}"
        for name in ("hit_at_k", "top_1", "mrr")
        if (value := search.get(name)) is not None
    )
    coverage = f"{figures.schema_coverage:.3f}" if figures.schema_coverage is not None else "n/a"
    lines.append(f"measured: schema_coverage {coverage}; search over {figures.search.cases} case(s): {shown}")
    if outcome.siblings:
        lines.append(
            f"  {outcome.siblings} operation(s) share their summary with another: their queries name method and path"
        )
    if outcome.execute_gated and figures.execute is not None:
        rate = figures.execute.figures.get("execute_read_success_rate")
        lines.append(
            f"measured: execute_read_success_rate {rate:.3f} over {figures.execute.cases} read case(s) against {outcome.base_url}"
        )
    elif outcome.reads:
        note = figures.execute_note.replace("\n", " ")
        lines.append(f"execute: {outcome.reads} read case(s) written in gates/execute_read/. {note}")
    if outcome.rejected:
        lines.append(f"warning: {outcome.rejected}")
    lines.append(
        "thresholds: written at these figures, rounded down; the first `qlab run` on this spec passes and a regression blocks"
    )
    if outcome.profiles:
        names = ", ".join(f"{p.name} ({', '.join(p.env)})" for p in outcome.profiles)
        lines.append(
            f"auth: profile(s) {names} read these environment variables; qlab never stores their values"
        )
    lines.append(
        f"environment: {outcome.base_url_variable} overrides the base URL ({outcome.base_url or 'none in the spec'})"
    )
    return "\n".join(lines)

"""What ``qlab run`` and ``qlab merge`` show and hand to CI after writing their outputs: the gate table, the
findings (GitHub annotations in Actions, ``path:line: level: message`` lines elsewhere), the job summary and the
step outputs. Shared by the two commands; not a subcommand itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from qlab.adapters import scrub
from qlab.adapters.scrub import SecretSet
from qlab.contracts.errors import InputError
from qlab.report import console, derive, github, markdown
from qlab.run.outputs import OutputPaths
from qlab.run.provenance import git_root


def workspace() -> Path:
    """Where GitHub resolves an annotation's ``file``: ``$GITHUB_WORKSPACE``, else the git root of the working
    directory, else the working directory."""
    found = os.environ.get("GITHUB_WORKSPACE")
    return Path(found) if found else git_root(Path.cwd()) or Path.cwd()


def case_root(artifact: Mapping[str, Any], config_path: str | Path | None) -> str:
    """Where the run's case files are, relative to the workspace: the cases' ``file`` is relative to the root the
    run found (its git root, or qlab.yaml's folder where git gave none), which the artifact records as the path
    of qlab.yaml below it (``provenance.run_configuration.config``). ``qlab merge`` has no qlab.yaml: the root is
    the working directory's checkout."""
    root: Path | None = None
    recorded = ((artifact.get("provenance") or {}).get("run_configuration") or {}).get("config")
    if (
        config_path is not None
        and isinstance(recorded, str)
        and recorded
        and not Path(recorded).is_absolute()
    ):
        root = Path(os.path.abspath(config_path)).parents[len(Path(recorded).parts) - 1]
    where = github.workspace_path(root or git_root(Path.cwd()) or Path.cwd(), workspace())
    return "" if where in (None, ".") else where


def render_outcome(
    artifact: Mapping[str, Any],
    paths: OutputPaths,
    *,
    quiet: bool,
    secrets: SecretSet | None = None,
    config_path: str | Path | None = None,
    previous: Mapping[str, Any] | None = None,
) -> None:
    """Print the findings and the gate table; feed GitHub's summary and outputs when running in Actions. The
    console is scrubbed by ``qlab.adapters.scrub.console``; GitHub's files are scrubbed here with ``secrets``.
    ``config_path`` locates the case files for annotations; ``previous`` is the run before this one (history)."""
    text = secrets.text if secrets else (lambda value: value)
    stdout = sys.stdout
    color = console.use_color(stdout)
    root = case_root(artifact, config_path)
    if github.in_actions():
        for line in github.annotation_lines(artifact, root=root):
            scrub.workflow_command(line)
        details = _failure_details(artifact)
        if details and not quiet:
            start, end = github.stop_commands()
            scrub.workflow_command(start)
            click.echo(details)  # downstream text: the console makes any workflow command in it inert too
            scrub.workflow_command(end)
    elif not quiet:
        for line in github.plain_lines(artifact, root=root):
            click.echo(line, err=True)
    if quiet:
        decision = artifact.get("decision") or {}
        click.echo(f"{derive.verdict(decision).upper()} (exit {decision.get('exit_code')})")
    else:
        click.echo(console.gate_table(artifact, color=color))
        if previous is not None:
            click.echo(console.since_last(derive.since_last(previous, artifact)))
        click.echo(f"result: {paths.result}\njunit:  {paths.junit}\nsummary: {paths.summary}")
    with _ci_file("GITHUB_STEP_SUMMARY"):
        # on the run page a relative link leads nowhere: the files are named, the run's page is linked
        summary = markdown.render(artifact, links=paths.links(), run_url=github.run_url(), previous=previous)
        github.append_summary(text(summary))
    with _ci_file("GITHUB_OUTPUT"):
        values = github.outputs(
            artifact, {"result": paths.result, "junit": paths.junit, "summary": paths.summary}
        )
        github.write_outputs({key: text(str(value)) for key, value in values.items()})


CI_FILES = ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")


def check_ci_files(environ: Mapping[str, str] | None = None) -> None:
    """Before any case runs: the files GitHub hands over in ``$GITHUB_STEP_SUMMARY`` and ``$GITHUB_OUTPUT``
    (when set) can be appended to. A folder or a missing parent is an InputError (exit 2) naming the variable,
    instead of an internal error after the whole run."""
    env = os.environ if environ is None else environ
    for name in CI_FILES:
        target = env.get(name)
        if target:
            with _ci_file(name, target), open(target, "a", encoding="utf-8"):
                pass  # appending nothing: the file is created as GitHub's runner would have


@contextlib.contextmanager
def _ci_file(name: str, target: str | None = None) -> Iterator[None]:
    """Turns an OSError on a CI hand-over file into an InputError naming the environment variable."""
    try:
        yield
    except OSError as exc:
        where = target or os.environ.get(name, "")
        raise InputError(
            f"${name} ({where}): cannot be written: {exc.strerror or exc}; it must name a file in an existing folder"
        ) from None


def _failure_details(artifact: Mapping[str, Any]) -> str:
    lines = []
    for case in artifact.get("cases") or ():
        if case.get("status") in ("failed", "error"):
            failure = case.get("failure") or {}
            lines.append(
                f"{case.get('case_id')}: {failure.get('stage')}: {failure.get('reason')}: {failure.get('message', '')}"
            )
    return "\n".join(lines)

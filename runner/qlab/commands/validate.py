"""``qlab validate``: check qlab.yaml and every case file; print every problem at once.

Exit 0 when valid (warnings are printed but do not fail), 2 when anything is invalid. ``--json`` prints a
machine-readable report on stdout instead (same exit codes). The tool names cases write are checked against
the collection when its sources are local files (``qlab.collection.case_tools``); otherwise a note says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from qlab.commands.examples import with_examples
from qlab.contracts.errors import EXIT_INPUT, EXIT_PASS, ConfigError, Diagnostic


def _counts(diagnostics: list[Diagnostic]) -> tuple[int, int]:
    errors = sum(1 for d in diagnostics if d.severity == "error")
    return errors, len(diagnostics) - errors


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _as_dict(d: Diagnostic) -> dict[str, Any]:
    return {"file": d.file, "line": d.line, "col": d.col, "json_path": d.json_path, "message": d.message,
            "severity": d.severity}  # fmt: skip


def _tool_names(tools: Any) -> dict[str, Any]:
    """The ``tool_names`` section of the JSON report: checked against how many tools, or why not."""
    if tools.skipped:
        return {"checked": False, "reason": tools.skipped, "names": tools.names}
    return {
        "checked": tools.names > 0,
        "tools": tools.tools,
        "names": tools.names,
        "unknown": list(tools.unknown),
    }


@click.command("validate", epilog=with_examples("validate"))
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="qlab.yaml to validate (default: ./qlab.yaml, searched upwards to the repository root).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report on stdout instead of text.")
@click.argument("case_files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
def command(config_path: Path | None, as_json: bool, case_files: tuple[Path, ...]) -> int:
    """Validate qlab.yaml and every case file of its suites (or only CASE_FILES).

    Every error of every file is printed as file:line:col: $.json.path: message. Exit 0 when valid, 2 when not.
    """
    from qlab.collection.case_tools import ToolNames, check_tool_names
    from qlab.project import find_config, load_project

    path = config_path if config_path is not None else find_config()
    tools = ToolNames()
    try:
        project = load_project(path, case_files=list(case_files) if case_files else None)
        tools = check_tool_names(project.config, project.cases)
        if tools.diagnostics:
            raise ConfigError(sorted([*project.warnings, *tools.diagnostics]))
    except ConfigError as exc:
        diagnostics = list(exc.diagnostics)
        errors, warnings = _counts(diagnostics)
        if as_json:
            report = {"valid": False, "config": str(path), "errors": errors, "warnings": warnings,
                      "diagnostics": [_as_dict(d) for d in diagnostics], "tool_names": _tool_names(tools)}  # fmt: skip
            click.echo(json.dumps(report, indent=2))
        else:
            for diagnostic in diagnostics:
                click.echo(diagnostic.render(), err=True)
            click.echo(f"invalid: {_plural(errors, 'error')}, {_plural(warnings, 'warning')}", err=True)
        return EXIT_INPUT
    warnings_list = list(project.warnings)
    suites = {name: len(project.cases_for(name)) for name in project.config.suites}
    if as_json:
        report = {
            "valid": True,
            "config": str(path),
            "errors": 0,
            "warnings": len(warnings_list),
            "diagnostics": [_as_dict(d) for d in warnings_list],
            "project": project.config.project,
            "digest": project.config.digest,
            "suites": suites,
            "cases": len(project.cases),
            "case_files": [
                {"path": f.path, "digest": f.digest, "count": f.count} for f in project.case_files
            ],
            "tool_names": _tool_names(tools),
        }
        click.echo(json.dumps(report, indent=2))
        return EXIT_PASS
    for diagnostic in warnings_list:
        click.echo(diagnostic.render(), err=True)
    if tools.skipped:
        click.echo(
            f"note: the tool names of the cases were not checked: {tools.skipped}; `qlab run` checks them",
            err=True,
        )
    click.echo(
        f"valid: {_plural(len(project.cases), 'case')} in {_plural(len(project.case_files), 'file')}, "
        f"{_plural(len(suites), 'suite')}, {_plural(len(project.config.gates), 'gate')}"
        + (f"; {_plural(len(warnings_list), 'warning')}" if warnings_list else "")
    )
    return EXIT_PASS

"""``qlab build``: build the collection, write its artifact, print the readiness report.

The artifact goes to ``<output.dir>/collection.json`` (beside qlab.yaml). The report is a table (colored on a
terminal), or JSON with ``--json``. Exit 0 when built, 1 when the build gate's ``schema_coverage_below`` stop
condition fires, 2 when qlab.yaml or a source is invalid (``file:line:col: $.json.path: message``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from qlab.commands.examples import with_examples
from qlab.contracts.errors import EXIT_BLOCKED, EXIT_PASS

ARTIFACT_NAME = "collection.json"


@click.command("build", epilog=with_examples("build"))
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="qlab.yaml (default: ./qlab.yaml, searched upwards to the repository root).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option(
    "--no-cache", is_flag=True, help="Parse every source again instead of reusing the cached build."
)
def command(config_path: Path | None, as_json: bool, no_cache: bool) -> int:
    """Build the collection from qlab.yaml's sources, write its artifact and print the readiness report."""
    from qlab.collection.builder import build_collection
    from qlab.project import find_config, load_project
    from qlab.stages.build import stage_report

    path = config_path if config_path is not None else find_config()
    config = load_project(path, case_files=[]).config
    target = Path(config.path).parent / config.output.dir / ARTIFACT_NAME
    output = build_collection(config, use_cache=not no_cache, write_to=target)
    gate = next((g for g in config.gates if g.stage == "build"), None)
    report = stage_report(output, gate)
    code = EXIT_BLOCKED if report.stops else EXIT_PASS
    if as_json:
        out: dict[str, Any] = {
            "collection": {**report.details["collection"], "artifact": str(target)},
            "metrics": report.metrics,
            "stops": [{"condition": s.condition, "message": s.message} for s in report.stops],
            "readiness": report.details["readiness"],
            "exit_code": code,
        }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        color = sys.stdout.isatty()
        shown = _from_cwd(target)
        click.echo(render(report.details, target=shown, stops=[s.message for s in report.stops], color=color))
    return code


def _from_cwd(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _needs_entity(unsatisfied: list[dict[str, Any]], shown: int = 4) -> str:
    """``3 required input(s) have no producer: createOrder.items (value), ...``."""
    if not unsatisfied:
        return "none: every required input has a producer"
    names = ", ".join(f"{u['tool']}.{u['parameter']} ({u['kind']})" for u in unsatisfied[:shown])
    more = f", and {len(unsatisfied) - shown} more" if len(unsatisfied) > shown else ""
    return f"{len(unsatisfied)} required input(s) have no producer: {names}{more}"


def render(details: dict[str, Any], *, target: str, stops: list[str], color: bool) -> str:
    """The readiness report as aligned text: summary rows, then the tools pulling coverage down."""
    col = details["collection"]
    r = details["readiness"]
    counts = r["counts"]
    sources = ", ".join(
        f"{s['name']} ({s.get('dialect') or s['kind']}, {s['tools']})" for s in col["sources"]
    )
    contract = r["contract_coverage"]
    contract_text = (
        "n/a (no required reference inputs)"
        if contract is None
        else f"{contract:.1%} ({counts['reference_inputs_with_producer']}/{counts['reference_inputs']} reference "
        f"inputs have a producer)"
    )
    auth = r["auth"]
    auth_text = {"not_required": "not required", "ok": f"ok (profile {auth.get('profile')})"}.get(
        auth["status"], f"{auth['status']}: {auth.get('message', '')}"
    )
    collisions = r["collisions"]
    rows = [
        ("collection", f"{col['tools']} tools from {sources}" + ("  [cached]" if col["cached"] else "")),
        ("digest", col["digest"]),
        ("artifact", target),
        ("schema coverage", f"{r['schema_coverage']:.1%} (threshold {r['threshold']:.0%})"),
        ("contract coverage", contract_text),
        ("contracts", str(counts["contracts"])),
        ("auth", auth_text),
        (
            "collisions",
            ", ".join(
                f"{c['id']} -> {c['renamed_to'] or c.get('similar_to')} ({c['kind']})" for c in collisions[:5]
            )
            or "none",
        ),
        ("needs entity", _needs_entity(r["unsatisfied"])),
    ]
    verdict = r["verdict"].replace("_", " ").upper() + (
        f" ({', '.join(r['reasons'])})" if r["reasons"] else ""
    )
    if color:
        verdict = click.style(
            verdict, fg={"ready": "green", "needs_work": "yellow"}.get(r["verdict"], "red"), bold=True
        )
    rows.append(("verdict", verdict))
    width = max(len(label) for label, _ in rows)
    lines = [f"{label.ljust(width)}  {value}" for label, value in rows]
    for mismatch in auth.get("mismatches") or ():
        lines.append(f"{''.ljust(width)}  warning: {mismatch}")
    for warning in r["warnings"]:
        lines.append(f"warning: {warning}")
    if r["worst"]:
        lines += ["", "tools pulling coverage down:"]
        id_width = min(48, max(len(t["tool"]) for t in r["worst"]))
        lines.append(f"  {'tool'.ljust(id_width)}  score  missing")
        for tool in r["worst"]:
            lines.append(
                f"  {tool['tool'][:id_width].ljust(id_width)}  {tool['score']:.2f}   {'; '.join(tool['missing'])}"
            )
    for message in stops:
        stop = f"stop: schema_coverage_below: {message}"
        lines += ["", click.style(stop, fg="red") if color else stop]
    return "\n".join(lines)

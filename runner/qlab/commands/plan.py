"""``qlab plan "query" --entity k=v [--llm-target X] [--json]``: one query through search, select and plan.

Prints the Top-K the selector chose from, the ``target_selector`` block (LLM target, selected target,
override flag, reason codes), then the plan: its steps with arguments and bindings to earlier steps, the
inputs the user must still provide, and the synthesis diagnostics. ``--entity`` values are read as JSON when
they parse (``limit=5``, ``items=["SKU-1"]``), else as strings. Exit 0 when a plan was synthesized, 1 when it
needs input or failed, 2 on invalid input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from qlab.commands._engine import CONFIG_OPTION, SPEC_OPTION, close, open_engine, parse_entity, table
from qlab.commands.examples import with_examples
from qlab.contracts.errors import EXIT_BLOCKED, EXIT_PASS
from qlab.engine import planner, wire
from qlab.engine.types import Plan, SearchResult, Selection


def render(query: str, result: SearchResult, selection: Selection, plan: Plan) -> str:
    lines = [f"query: {query}", ""]
    rows = [[str(r.rank), r.tool_id, f"{r.score:.3f}", " ".join(r.matched_terms)] for r in result.rows]
    lines += table(["#", "tool", "score", "matched"], rows) if rows else ["no tool matched"]
    override = "  (overrode the LLM)" if selection.overrode_llm else ""
    lines += [
        "",
        f"llm target:      {selection.llm_target or '-'}",
        f"selected target: {selection.selected_target or '-'}{override}",
        f"reason codes:    {', '.join(selection.reason_codes) or '-'}",
    ]
    if selection.ambiguous:
        lines.append(f"ambiguous:       {', '.join(selection.candidates)}")
    if selection.llm_usage:
        usage = selection.llm_usage
        lines.append(f"llm usage:       {usage.get('total_tokens', 0)} tokens, ${usage.get('cost_usd', 0)}")
    reason = f" ({plan.reason})" if plan.reason else ""
    lines += ["", f"plan {plan.plan_id}: {plan.status}{reason}"]
    for i, step in enumerate(plan.steps):
        args = [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in step.arguments.items()]
        binds = [f"{k} <- step {b.get('step')} {b.get('path')}" for k, b in step.bindings.items()]
        lines.append(f"  {i}. {step.tool_id}({', '.join(args + binds)})")
    for slot in plan.user_input_slots:
        lines.append(f"  needs input: {slot.tool_id}.{slot.parameter} ({slot.location}; {slot.reason})")
    if plan.diagnostics:
        lines += ["", "diagnostics:", *(f"  - {note}" for note in plan.diagnostics)]
    return "\n".join(lines)


@click.command("plan", epilog=with_examples("plan"))
@click.argument("query")
@click.option("--entity", "entities", multiple=True, help="A provided entity, name=value (repeatable).")
@click.option(
    "--llm-target", default=None, help="A recorded LLM target for the selector to keep or override."
)
@click.option(
    "-k", "k", type=click.IntRange(min=1), default=8, show_default=True, help="Top-K to select from."
)
@click.option("--json", "as_json", is_flag=True, help="Print search, target_selector and plan as JSON.")
@CONFIG_OPTION
@SPEC_OPTION
def command(
    query: str,
    entities: tuple[str, ...],
    llm_target: str | None,
    k: int,
    as_json: bool,
    config_path: Path | None,
    spec: str | None,
) -> int:
    """Select a target for QUERY and synthesize its plan from the --entity values."""
    values = dict(parse_entity(text) for text in entities)
    engine, collection = open_engine(config_path, spec)
    try:
        result = engine.search(query, k=k)
        selection = engine.select(query, result, entities=values, llm_target=llm_target)
        target = selection.selected_target
        plan = (
            engine.plan(query, target, entities=values)
            if target is not None
            else planner.synthesize(None, values, collection=collection)
        )
    finally:
        close(engine)
    if as_json:
        out = {
            "query": query,
            "entities": values,
            "search": wire.search_to_dict(result),
            "target_selector": wire.selection_to_dict(selection),
            "plan": wire.plan_to_dict(plan),
        }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(render(query, result, selection, plan))
    return EXIT_PASS if plan.status == "synthesized" else EXIT_BLOCKED

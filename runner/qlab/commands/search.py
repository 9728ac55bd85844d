"""``qlab search "query" [-k 8] [--json]``: one query through the engine's search, with the score breakdown.

Prints the Top-K rows: rank, tool id, score, each field's contribution (id, summary, description, params,
tags, aliases, path), the matched terms and any misspelling corrections. ``--json`` prints the rows as the
search stage records them. Exit 0 when the engine answered, 2 on invalid input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from qlab.commands._engine import CONFIG_OPTION, SPEC_OPTION, close, open_engine, table
from qlab.commands.examples import with_examples
from qlab.engine import wire
from qlab.engine.bm25f import FIELDS
from qlab.engine.types import SearchResult
from qlab.errors import EXIT_PASS


def render(query: str, result: SearchResult, *, engine: str) -> str:
    """The rows as a table with one column per field that contributed to any row."""
    terms = " ".join(result.query_terms) or "(none)"
    lines = [f"query: {query}", f"engine: {engine}   terms: {terms}"]
    corrections = {w: f for row in result.rows for w, f in row.corrections.items()}
    if corrections:
        lines.append("corrected: " + ", ".join(f"{w} -> {f}" for w, f in corrections.items()))
    if not result.rows:
        return "\n".join([*lines, "", "no tool matched"])
    seen = {name for row in result.rows for name in row.field_scores}
    fields = [f for f in FIELDS if f in seen] + sorted(seen - set(FIELDS))
    header = ["#", "tool", "score", *fields, "matched"]
    rows = [
        [
            str(row.rank),
            row.tool_id,
            f"{row.score:.3f}",
            *(f"{row.field_scores[f]:.2f}" if f in row.field_scores else "-" for f in fields),
            " ".join(row.matched_terms),
        ]
        for row in result.rows
    ]
    return "\n".join([*lines, "", *table(header, rows)])


@click.command("search", epilog=with_examples("search"))
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=8, show_default=True, help="How many rows.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@CONFIG_OPTION
@SPEC_OPTION
def command(query: str, k: int, as_json: bool, config_path: Path | None, spec: str | None) -> int:
    """Search the collection for QUERY and show each row's score breakdown."""
    engine, _ = open_engine(config_path, spec)
    try:
        result = engine.search(query, k=k)
    finally:
        close(engine)
    if as_json:
        out = {"query": query, "k": k, "engine": engine.name, **wire.search_to_dict(result)}
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        click.echo(render(query, result, engine=engine.name))
    return EXIT_PASS

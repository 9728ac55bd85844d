"""``qlab search "query" [-k 8] [--json] [--explain]``: one query through the engine's search, with the score
breakdown.

Prints the Top-K rows: rank, tool id, score, each field's contribution (id, summary, description, params,
tags, aliases, path, values, body), the signals (``synonym``: what a word scored through
one of its synonyms; ``intent``: the method prior of the request's verb; ``scope``: the same prior again for an
operation on a collection or an item, as the request asks; ``target``: among the best few rows, the request
names what the operation acts on; ``semantic``: the hybrid engine's embedding similarity), the matched terms
(``remove~delet``: "remove" matched through "delete") and any misspelling corrections. ``--explain`` first
shows how the query was read: framing and values left out, the intent and the methods it favours, and how each
word matches. ``--json`` prints the rows as the search stage records them. Exit 0 when the engine answered, 2 on
invalid input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from qlab.commands._engine import CONFIG_OPTION, SPEC_OPTION, close, open_engine, table
from qlab.commands.examples import with_examples
from qlab.contracts.errors import EXIT_PASS
from qlab.engine import wire
from qlab.engine.bm25f import FIELDS
from qlab.engine.index import Explanation
from qlab.engine.types import SearchResult

SIGNALS = ("synonym", "intent", "scope", "target", "semantic")  # shown after the fields, in this order


def render_explanation(explanation: Explanation | None, *, engine: str) -> list[str]:
    """How the query was read, one line per signal."""
    if explanation is None:
        return [f"explain: engine {engine} does not say how it reads a query"]
    reading = explanation.reading
    lines = []
    if reading.framing:
        lines.append(f"framing (left out): {' '.join(reading.framing)}")
    if reading.values:
        lines.append(f"values (weak, at value_weight): {' '.join(reading.values)}")
    if reading.intent:
        methods = "/".join(explanation.methods) or "-"
        lines.append(
            f"intent: {reading.intent} (from {reading.verb!r}): {methods} operations get the method prior"
        )
        if reading.scope:
            lines.append(f"scope: {reading.scope}: those on a {reading.scope}'s path get it twice")
    else:
        lines.append("intent: none (no verb or question word says one): no method prior")
    for word in explanation.words:
        if word.how == "correction":
            note = f"misspelt: rescued to {word.corrected!r}"
        elif word.how == "synonyms":
            note = f"not in the collection; matched through synonyms {', '.join(word.synonyms) or '-'}"
        elif word.how == "word":
            note = f"stem {word.term!r}" + (
                f", also through synonyms {', '.join(word.synonyms)}" if word.synonyms else ""
            )
        elif word.how == "stopword":
            note = "stopword"
        else:
            note = f"stem {word.term!r}: in no tool, no synonym, no confident correction"
        lines.append(f"  {word.word}: {note}")
    return lines


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
    known = (*FIELDS, *SIGNALS)
    fields = [f for f in known if f in seen] + sorted(seen - set(known))
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
@click.option(
    "--explain",
    is_flag=True,
    help="Also show how the query was read: framing, values, intent, each word's match.",
)
@CONFIG_OPTION
@SPEC_OPTION
def command(
    query: str, k: int, as_json: bool, explain: bool, config_path: Path | None, spec: str | None
) -> int:
    """Search the collection for QUERY and show each row's score breakdown."""
    engine, _ = open_engine(config_path, spec)
    try:
        result = engine.search(query, k=k)
        explainer = getattr(engine, "explain", None)
        explanation = explainer(query) if explain and callable(explainer) else None
    finally:
        close(engine)
    if as_json:
        out = {"query": query, "k": k, "engine": engine.name, **wire.search_to_dict(result)}
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        text = render(query, result, engine=engine.name)
        if explain:
            head, _, rest = text.partition("\n\n")
            text = "\n".join([head, *render_explanation(explanation, engine=engine.name), "", rest])
        click.echo(text)
    return EXIT_PASS

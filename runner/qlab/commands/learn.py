"""``qlab learn``: list, shadow-rank, accept and reject learning suggestions (the learning loop).

Nothing is applied automatically: ``shadow`` only stores pending suggestions and reports what they would
change; ``accept ID --by NAME`` is the one step that writes an alias into the reviewed aliases file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from qlab.commands.examples import with_examples
from qlab.governance.env import collection_and_engines, default_result, project
from qlab.governance.learning import suggestions as store
from qlab.governance.learning.suggest import run_learning
from qlab.governance.records import load_artifact

_CONFIG = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


@click.group(
    "learn",
    invoke_without_command=True,
    help="List, shadow-rank, accept and reject learning suggestions.",
    epilog=with_examples("learn"),
)
@click.pass_context
def command(ctx: click.Context) -> int:
    if ctx.invoked_subcommand is None:
        return int(ctx.invoke(list_command))
    return 0


@command.command(
    "list",
    help="List the stored suggestions (default: those pending review).",
    epilog=with_examples("learn list"),
)
@_CONFIG
@click.option(
    "--status",
    type=click.Choice(["pending_review", "accepted", "rejected", "all"]),
    default="pending_review",
    show_default=True,
)
@_JSON
def list_command(
    config_path: str | None = None, status: str = "pending_review", as_json: bool = False
) -> int:
    config = project(config_path).config
    items = [
        s for s in store.load(store.suggestions_path(config)) if status == "all" or s.get("status") == status
    ]
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
    else:
        click.echo(
            _table(items)
            if items
            else f"no {status.replace('_', ' ')} suggestions in {config.learning.suggestions_file}"
        )
    return 0


@command.command(
    "shadow",
    help="Suggest from a result, shadow-rank the suggestions in memory, and store them pending review.",
    epilog=with_examples("learn shadow"),
)
@_CONFIG
@click.option(
    "--result",
    "result_path",
    type=click.Path(dir_okay=False),
    help="The result artifact (default: the last `qlab run` output).",
)
@_JSON
def shadow_command(config_path: str | None, result_path: str | None, as_json: bool) -> int:
    loaded = project(config_path)
    config = loaded.config
    result = load_artifact(result_path or default_result(config))
    collection, factory = collection_and_engines(config)
    out = run_learning(
        result.data, config=config, collection=collection, engine_factory=factory, cases=loaded.cases
    )
    store.save(store.suggestions_path(config), out["suggestions"])
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return 0
    click.echo(
        _table(out["suggestions"])
        if out["suggestions"]
        else "no suggestions: no missed search case, no override"
    )
    click.echo(_shadow_text(out["shadow"]))
    click.echo(f"stored in {config.learning.suggestions_file} (pending review); nothing else changed")
    return 0


@command.command(
    "accept",
    help="Accept a suggestion: an alias goes to the reviewed aliases file with who and when.",
    epilog=with_examples("learn accept"),
)
@click.argument("suggestion_id")
@click.option("--by", "--reviewer", "by", required=True, help="Who accepts it.")
@_CONFIG
def accept_command(suggestion_id: str, by: str, config_path: str | None) -> int:
    config = project(config_path).config
    review = store.accept(config, suggestion_id, by=by)
    done = review.suggestion
    if review.written:
        click.echo(
            f"accepted {done['id']}: added {', '.join(map(repr, review.written))} to {done['tool_id']} in {done.get('written_to')}"
        )
    elif done.get("kind") == "alias":
        click.echo(f"accepted {done['id']}: {done['tool_id']} already had these aliases")
    else:
        click.echo(
            f"accepted {done['id']} (a selector-policy note: act on it by hand): {done.get('text', '')}"
        )
    click.echo(_confirm_hint(done))
    return 0


def _confirm_hint(suggestion: Mapping[str, Any]) -> str:
    """How to confirm an accepted suggestion: a new run, then the promotion rule of its change type."""
    if suggestion.get("kind") == "alias":
        # shadow_improves reads the shadow result stored with the suggestions accepted from this run
        return (
            "run `qlab run`, then `qlab promote --baseline <the result of run "
            f"{suggestion.get('run_id')}> --candidate <the new result> --change learning_suggestion_promotion`"
        )
    return "once acted on, run `qlab run` and `qlab promote --change selector_override_policy` to confirm it"


@command.command(
    "reject",
    help="Reject a suggestion; nothing is written but the decision.",
    epilog=with_examples("learn reject"),
)
@click.argument("suggestion_id")
@click.option("--by", "--reviewer", "by", required=True, help="Who rejects it.")
@click.option("--reason", default="", help="Why.")
@_CONFIG
def reject_command(suggestion_id: str, by: str, reason: str, config_path: str | None) -> int:
    config = project(config_path).config
    review = store.reject(config, suggestion_id, by=by, reason=reason)
    click.echo(f"rejected {review.suggestion['id']}")
    return 0


def _table(items: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for s in items:
        what = (
            f"{s.get('tool_id')} += {', '.join(s.get('aliases') or ())}"
            if s.get("kind") == "alias"
            else str(s.get("text", ""))
        )
        shadow = s.get("shadow") or {}
        delta = shadow.get("delta") or {}
        effect = (
            f"  shadow Δhit@k {delta.get('hit_at_k', 0):+.3f}, -{len(shadow.get('regressed') or ())} case(s)"
            if delta
            else ""
        )
        lines.append(
            f"{s['id']}  {s.get('status')}  {s.get('kind')}  {what}  ({len(s.get('evidence') or ())} case(s)){effect}"
        )
    return "\n".join(lines)


def _shadow_text(shadow: Mapping[str, Any]) -> str:
    if not shadow.get("cases"):
        return "shadow rank: no search case is affected"
    before, after = shadow["before"], shadow["after"]
    metrics = ", ".join(f"{m} {before[m]:.3f} → {after[m]:.3f}" for m in ("hit_at_k", "top_1", "mrr"))
    return (
        f"shadow rank over {shadow['cases']} affected case(s): {metrics}; "
        f"improved {', '.join(shadow['improved']) or 'none'}; worse {', '.join(shadow['regressed']) or 'none'}"
    )

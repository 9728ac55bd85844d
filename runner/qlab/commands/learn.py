"""``qlab learn``: the learning loop's review step — signals, proposals, their sandbox eval side by side, accept
and reject.

Nothing takes effect automatically: ``shadow`` only stores pending proposals; ``sandbox`` replays a proposal
against stored runs in memory and keeps the outcome with it; ``accept ID --by NAME`` publishes a proposal whose
sandbox eval passed its quality gate (running the sandbox first when it has none); ``reject`` records a no.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from qlab.commands.examples import with_examples
from qlab.contracts.metrics import SCORECARD_DIMENSIONS
from qlab.contracts.results import json_or_text
from qlab.governance.env import collection_and_engines, default_result, project
from qlab.governance.learning import suggestions as store
from qlab.governance.learning.apply import applicable, describe, type_of
from qlab.governance.learning.sandbox import History, activation_check, base_subject, run_sandbox
from qlab.governance.learning.suggest import run_learning
from qlab.governance.records import PENDING, load_artifact
from qlab.project import Project

_CONFIG = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="qlab.yaml (default: searched upwards)."
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
_RESULTS = click.option(
    "--result",
    "result_paths",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A stored result artifact (repeatable; default: the last `qlab run` output).",
)


@click.group(
    "learn",
    invoke_without_command=True,
    help="The learning loop: list signals and proposals, replay a proposal in the sandbox, accept or reject it.",
    epilog=with_examples("learn"),
)
@click.pass_context
def command(ctx: click.Context) -> int:
    if ctx.invoked_subcommand is None:
        return int(ctx.invoke(list_command))
    return 0


@command.command(
    "list",
    help="List the stored proposals (default: those pending review), each with its sandbox eval side by side.",
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
    elif items:
        click.echo("\n\n".join(_card(s) for s in items))
    else:
        click.echo(f"no {status.replace('_', ' ')} proposals in {config.learning.suggestions_file}")
    return 0


@command.command(
    "signals",
    help="The learning signals of a result (and the run before it), without storing anything.",
    epilog=with_examples("learn signals"),
)
@_CONFIG
@click.option(
    "--result", "result_path", type=click.Path(dir_okay=False), help="The result (default: the last run)."
)
@click.option("--previous", "previous_path", type=click.Path(dir_okay=False), help="The run before it.")
@_JSON
def signals_command(
    config_path: str | None, result_path: str | None, previous_path: str | None, as_json: bool
) -> int:
    loaded = project(config_path)
    out = _learn(loaded, result_path, previous_path)
    if as_json:
        click.echo(json.dumps(out["signals"], indent=2, ensure_ascii=False, default=json_or_text))
    else:
        click.echo(_signals_text(out["signals"]))
    return 0


@command.command(
    "shadow",
    help="Detect signals in a result, make proposals, shadow-rank the aliases in memory, store them pending review.",
    epilog=with_examples("learn shadow"),
)
@_CONFIG
@click.option(
    "--result",
    "result_path",
    type=click.Path(dir_okay=False),
    help="The result artifact (default: the last `qlab run` output).",
)
@click.option("--previous", "previous_path", type=click.Path(dir_okay=False), help="The run before it.")
@_JSON
def shadow_command(
    config_path: str | None, result_path: str | None, previous_path: str | None, as_json: bool
) -> int:
    loaded = project(config_path)
    config = loaded.config
    out = _learn(loaded, result_path, previous_path)
    store.save(store.suggestions_path(config), out["suggestions"])
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=json_or_text))
        return 0
    click.echo(_signals_text(out["signals"]))
    click.echo(_table(out["suggestions"]) if out["suggestions"] else "no proposals")
    click.echo(_shadow_text(out["shadow"]))
    click.echo(f"stored in {config.learning.suggestions_file} (pending review); nothing else changed")
    return 0


def _learn(loaded: Project, result_path: str | None, previous_path: str | None) -> dict[str, Any]:
    config = loaded.config
    result = load_artifact(result_path or default_result(config))
    previous = None
    if previous_path:
        before = load_artifact(previous_path)
        previous = {**before.data, "_digest": before.digest, "_path": before.path}
    collection, factory = collection_and_engines(config)
    return run_learning(
        result.data,
        config=config,
        collection=collection,
        engine_factory=factory,
        cases=loaded.cases,
        previous=previous,
    )


@command.command(
    "sandbox",
    help="Replay proposals against stored runs with the proposal applied in memory (A/B), then its quality gate; "
    "the outcome is kept with the proposal.",
    epilog=with_examples("learn sandbox"),
)
@click.argument("suggestion_ids", nargs=-1)
@_RESULTS
@_CONFIG
@_JSON
def sandbox_command(
    suggestion_ids: tuple[str, ...], result_paths: tuple[str, ...], config_path: str | None, as_json: bool
) -> int:
    loaded = project(config_path)
    config = loaded.config
    items = store.load(store.suggestions_path(config))
    chosen = (
        [store.find(items, i) for i in suggestion_ids]
        if suggestion_ids
        else [s for s in items if s.get("status") == PENDING]
    )
    if not chosen:
        click.echo(f"no pending proposals in {config.learning.suggestions_file}")
        return 0
    outcomes = _sandbox(loaded, chosen, result_paths)
    if as_json:
        click.echo(json.dumps(outcomes, indent=2, ensure_ascii=False, default=json_or_text))
        return 0
    for item in store.load(store.suggestions_path(config)):
        if item["id"] in outcomes:
            click.echo(_card(item) + "\n")
    click.echo(
        "nothing was applied: accept a proposal whose quality gate passed with `qlab learn accept ID --by NAME`"
    )
    return 0


def _sandbox(
    loaded: Project, chosen: Sequence[Mapping[str, Any]], result_paths: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Run the sandbox eval of each chosen proposal and store it with the proposal."""
    config = loaded.config
    paths = list(result_paths) or [str(default_result(config))]
    history = History(tuple(load_artifact(p) for p in paths), tuple(loaded.cases))
    collection, _factory = collection_and_engines(config)
    base = base_subject(config, collection)
    out: dict[str, dict[str, Any]] = {}
    for item in chosen:
        outcome = run_sandbox(item, history=history, base=base)
        store.store_sandbox(config, str(item["id"]), outcome)
        out[str(item["id"])] = outcome
    return out


@command.command(
    "accept",
    help="Accept a proposal and publish it: an alias, a knowledge entry, a regression case; a policy change is "
    "printed for you to make. Only after its sandbox eval passed its quality gate.",
    epilog=with_examples("learn accept"),
)
@click.argument("suggestion_id")
@click.option("--by", "--reviewer", "by", required=True, help="Who accepts it.")
@_RESULTS
@_CONFIG
def accept_command(
    suggestion_id: str, by: str, result_paths: tuple[str, ...], config_path: str | None
) -> int:
    loaded = project(config_path)
    config = loaded.config
    target = store.find(store.load(store.suggestions_path(config)), suggestion_id)
    # the sandbox runs first when the proposal has none (or --result names the runs to replay); a stored one that
    # failed stands until `qlab learn sandbox` runs it again
    if applicable(target) and target.get("status") == PENDING and (result_paths or not target.get("sandbox")):
        click.echo(f"running the sandbox eval of {target['id']} first", err=True)
        _sandbox(loaded, [target], result_paths)
    review = store.accept(config, suggestion_id, by=by, check=activation_check(Path(config.path)))
    done = review.suggestion
    kind = type_of(done)
    if kind == "policy" and review.edit:
        click.echo(
            f"accepted {done['id']}: make this edit in qlab.yaml (qlab never edits it):\n{review.edit}"
        )
    elif review.written:
        click.echo(
            f"accepted {done['id']}: added {', '.join(map(repr, review.written))} to {review.written_to}"
        )
    elif applicable(done):
        click.echo(f"accepted {done['id']}: {review.written_to or 'the project'} already had it")
    else:
        click.echo(f"accepted {done['id']} (a note: act on it by hand): {done.get('text', '')}")
    click.echo(_confirm_hint(done))
    return 0


def _confirm_hint(suggestion: Mapping[str, Any]) -> str:
    """How to confirm an accepted proposal: a new run, then the promotion rule of its change type."""
    kind = type_of(suggestion)
    if kind == "collection_metadata":
        # shadow_improves reads the shadow result stored with the suggestions accepted from this run
        return (
            "run `qlab run`, then `qlab promote --baseline <the result of run "
            f"{suggestion.get('run_id')}> --candidate <the new result> --change learning_suggestion_promotion`"
        )
    if kind == "memory":
        return "run `qlab run`: every run applies the knowledge file (its digest is in the fingerprint)"
    if kind == "eval_case":
        return "every run must pass the new regression case from now on"
    return "once acted on, run `qlab run` and `qlab promote --change selector_override_policy` to confirm it"


@command.command(
    "reject",
    help="Reject a proposal; nothing is written but the decision (it is never proposed again).",
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


# ------------------------------------------------------------------------------------------- rendering


def _table(items: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for s in items:
        shadow = s.get("shadow") or {}
        delta = shadow.get("delta") or {}
        effect = (
            f"  shadow Δhit@k {delta.get('hit_at_k', 0):+.3f}, -{len(shadow.get('regressed') or ())} case(s)"
            if delta
            else ""
        )
        lines.append(
            f"{s['id']}  {s.get('status')}  {type_of(s)} ({s.get('kind')}, {s.get('signal', '-')})  {describe(s)}  "
            f"({len(s.get('evidence') or ())} evidence){effect}"
        )
    return "\n".join(lines)


def _signals_text(found: Sequence[Mapping[str, Any]]) -> str:
    if not found:
        return "signals: none"
    return "signals:\n" + "\n".join(f"  {s['signal']}: {s['text']}" for s in found)


def _number(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _card(item: Mapping[str, Any]) -> str:
    """One proposal: what it changes, its evidence, and its sandbox eval side by side (A: as is, B: with it)."""
    change = describe(item) if applicable(item) else "none: a note for a person to act on"
    head = (
        f"{item['id']}  {item.get('status')}  {type_of(item)} ({item.get('kind')}, signal {item.get('signal', '-')})\n"
        f"  change:   {change}\n  why:      {item.get('text', '')}"
    )
    evidence = item.get("evidence") or ()
    cases = [str(e.get("case_id")) for e in evidence if isinstance(e, Mapping) and e.get("case_id")]
    head += f"\n  evidence: {len(evidence)} item(s)" + (f": {', '.join(cases[:8])}" if cases else "")
    box = item.get("sandbox")
    if not box:
        return head + "\n  sandbox:  not run yet (`qlab learn sandbox " + str(item["id"]) + "`)"
    if box.get("note"):
        return head + f"\n  sandbox:  {box['note']}"
    before, after = box.get("before") or {}, box.get("after") or {}
    rows = [f"  sandbox:  {len(box.get('history') or ())} stored run(s), {box.get('replayed')} case(s) replayed, "
            f"{box.get('not_replayed')} not replayed", f"  {'':24}{'A (as is)':>12}{'B (with it)':>14}{'delta':>10}"]  # fmt: skip
    delta = box.get("scorecardDelta") or {}
    for dimension in SCORECARD_DIMENSIONS:
        a, b = (before.get("scorecard") or {}).get(dimension), (after.get("scorecard") or {}).get(dimension)
        d = delta.get(dimension)
        rows.append(f"  {dimension:24}{_number(a):>12}{_number(b):>14}{'' if d is None else f'{d:+.3f}':>10}")
    rows.append(
        f"  {'decisions':24}{','.join(before.get('verdicts') or ()):>12}{','.join(after.get('verdicts') or ()):>14}"
    )
    regression, improvement = box.get("regressionCheck") or {}, box.get("improvementCheck") or {}
    rows.append(
        f"  regressionCheck:  {'passed' if regression.get('passed') else 'FAILED'}"
        + "".join(
            f"; {r['case_id']} {r['before']} → {r['after']}" for r in (regression.get("regressed") or [])[:3]
        )
    )
    better = [
        i["case_id"] for i in [*(improvement.get("improved") or ()), *(improvement.get("new_passing") or ())]
    ]
    rows.append(
        f"  improvementCheck: {'passed' if improvement.get('passed') else 'no improvement'}"
        + (f" ({', '.join(dict.fromkeys(better[:5]))})" if better else "")
    )
    cost, latency = box.get("costDelta") or {}, box.get("latencyDelta") or {}
    rows.append(
        f"  costDelta:        {cost.get('llm_cost_usd', 0):+.6f} USD, {cost.get('llm_tokens', 0):+d} tokens"
    )
    rows.append(f"  latencyDelta:     {latency.get('replayed_ms', 0):+.1f} ms over the replayed cases")
    gate = box.get("qualityGate") or {}
    checks = ", ".join(f"{c['name']} {'ok' if c['passed'] else 'FAILED'}" for c in gate.get("checks") or ())
    rows.append(f"  quality gate:     {'PASSED' if gate.get('passed') else 'FAILED'} ({checks})")
    for check in gate.get("checks") or ():
        rows += [f"    - {check['name']}: {p}" for p in (check.get("problems") or ())[:3]]
    return head + "\n" + "\n".join(rows)


def _shadow_text(shadow: Mapping[str, Any]) -> str:
    if not shadow.get("cases"):
        return "shadow rank: no search case is affected"
    before, after = shadow["before"], shadow["after"]
    metrics = ", ".join(f"{m} {before[m]:.3f} → {after[m]:.3f}" for m in ("hit_at_k", "top_1", "mrr"))
    alone = shadow.get("alone") or {}
    partly = (
        f"; {alone['measured']} of {alone['of']} suggestions measured alone (the first made, within the rerun budget)"
        if alone.get("measured", 0) < alone.get("of", 0)
        else ""
    )
    return (
        f"shadow rank over {shadow['cases']} affected case(s): {metrics}; "
        f"improved {', '.join(shadow['improved']) or 'none'}; worse {', '.join(shadow['regressed']) or 'none'}"
        + partly
    )

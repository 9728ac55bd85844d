"""The examples every command's ``--help`` ends with: one or two real command lines each, with what they do.

They are written against the demo project (``qlab init demo``) and a spec of your own, and a test parses each
one with the command it belongs to, so an example cannot name an option that does not exist.
"""

from __future__ import annotations

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "run": (
        ("qlab run", "every gate of the nearest qlab.yaml; exit 0 pass, 1 blocked, 2 invalid input"),
        ("qlab run --suite search_core --junit junit.xml", "one suite, JUnit XML where CI looks for it"),
    ),
    "validate": (
        ("qlab validate", "qlab.yaml and every case file, all errors at once"),
        ("qlab validate --json gates/search_core/deliveries.yaml", "one case file, a JSON report"),
    ),
    "init": (
        ("qlab init demo", "the demo project, gating the bundled demo API"),
        (
            "qlab init my-api --from-openapi https://api.example.com/openapi.json --base-url http://127.0.0.1:8080",
            "your API: spec pinned, thresholds measured",
        ),
    ),
    "schema": (
        ("qlab schema", "the names of the schemas qlab ships"),
        ("qlab schema config > schemas/qlab.schema.json", "the qlab.yaml schema, for your editor"),
    ),
    "build": (
        ("qlab build", "the readiness report: coverage, contracts, auth, collisions"),
        ("qlab build --json --no-cache", "parse every source again; the report as JSON"),
    ),
    "search": (
        ('qlab search "where is my parcel" -k 3', "the Top-3 with each field's share of the score"),
        ('qlab search "find pets by status" --spec openapi.yaml --json', "a spec without a project, as JSON"),
    ),
    "plan": (
        ('qlab plan "Find the member delivery detail" --entity memberNo=M-1001', "target, steps, bindings"),
        ('qlab plan "Cancel order 42" --llm-target cancelOrder --json', "replay an LLM's target, as JSON"),
    ),
    "merge": (
        ("qlab merge shards/", "every result.json below shards/ into one decision"),
        ("qlab merge shard-1/result.json shard-2/result.json --out merged", "named shards, merged elsewhere"),
    ),
    "report": (
        (
            "qlab report .qlab/out/result.json --trend --html report.html",
            "one HTML page, with the trends of the runs kept in .qlab/out/history",
        ),
        ("qlab report main.json pr.json --html trend.html", "the promotion diff and the trends of a series"),
    ),
    "promote": (
        (
            "qlab promote --baseline main.json --candidate pr.json --change alias_or_semantic_metadata",
            "an alias change",
        ),
        (
            "qlab promote --baseline main.json --candidate pr.json --change execute_enablement --json",
            "the JSON report",
        ),
    ),
    "learn": (
        (
            "qlab learn sandbox",
            "each pending proposal replayed A/B against the last run, then its quality gate",
        ),
        (
            "qlab learn accept sg-1a2b3c4d5e6f --by alice",
            "a proposal that passed its quality gate is published",
        ),
    ),
    "learn list": (
        ("qlab learn list", "the proposals pending review, each with its sandbox eval side by side"),
        ("qlab learn list --status all --json", "every proposal, as JSON"),
    ),
    "learn signals": (
        ("qlab learn signals", "the learning signals of the last run"),
        (
            "qlab learn signals --result pr.json --previous main.json --json",
            "two stored runs compared, as JSON",
        ),
    ),
    "learn sandbox": (
        ("qlab learn sandbox sg-1a2b3c4d5e6f", "one proposal replayed against the last run"),
        (
            "qlab learn sandbox --result main.json --result pr.json --json",
            "every pending one, against two runs",
        ),
    ),
    "learn shadow": (
        ("qlab learn shadow", "from the last `qlab run` output"),
        ("qlab learn shadow --result pr.json --previous main.json --json", "two stored runs, as JSON"),
    ),
    "learn accept": (
        (
            "qlab learn accept sg-1a2b3c4d5e6f --by alice",
            "published with who and when, once its quality gate passed",
        ),
    ),
    "learn reject": (
        ('qlab learn reject sg-1a2b3c4d5e6f --by alice --reason "too broad"', "nothing is written"),
    ),
    "propose-case": (
        (
            "qlab propose-case --result .qlab/out/result.json --case member-search-003",
            "a proposal, pending review",
        ),
    ),
    "accept-case": (
        ("qlab accept-case gates/proposals/prop-1a2b3c4d5e6f.json --by alice", "into the regression suite"),
        (
            "qlab accept-case --case reg-member-search-003 --status active --by alice",
            "a draft case starts to gate",
        ),
    ),
    "release": (
        ("qlab release member-delivery-skill", "the five release gates on the last run"),
        ("qlab release member-delivery-skill --result .qlab/out/result.json --json", "a stored run, as JSON"),
    ),
    "approve": (
        (
            'qlab approve member-delivery-skill --result .qlab/out/result.json --by alice --note "golden cases read"',
            "the human review, bound to the result's digest",
        ),
        (
            "qlab approve member-delivery-skill --result .qlab/out/result.json --by alice --regenerate",
            "ask for a new run before deciding",
        ),
    ),
}


def with_examples(name: str) -> str:
    """The ``Examples:`` epilog of command ``name``: each example's purpose as a comment, then the command line
    (click keeps a paragraph that starts with ``\\b`` as written)."""
    lines = ["\b", "Examples:"]
    for line, what in EXAMPLES[name]:
        lines += [f"  # {what}", f"  {line}"]
    return "\n".join(lines)

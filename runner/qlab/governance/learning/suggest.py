"""The ``learn`` stage's content: signals from the scrubbed results, the proposals they lead to (each with its
evidence), and shadow rank.

"Agent can propose learning, but production knowledge requires eval and human approval." So every proposal is
``pending_review`` with a stable id (a digest of what it proposes, not of its evidence: the same proposal from two
runs is one, and a rejected one never comes back); and nothing here writes a file: ``run_learning`` returns data,
``qlab.governance.learning.suggestions.save`` writes it, and only ``qlab learn accept`` publishes a proposal,
after its sandbox eval passed.

Signals come from ``qlab.governance.learning.signals``. This module makes the ``alias`` proposals (the query
words the expected tool's indexed text lacks, minus corrected misspellings, words with digits and stopwords) and
the ``selector_policy`` notes; ``qlab.governance.learning.proposers`` makes the others."""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qlab.adapters.scrub import secret_variants
from qlab.collection.model import Collection, Tool
from qlab.contracts.errors import QlabError
from qlab.contracts.results import to_json
from qlab.engine.base import Engine
from qlab.engine.text import Analyzer
from qlab.governance.learning import proposers, reviews, signals
from qlab.governance.learning.shadow import ShadowCase, shadow_rank
from qlab.governance.promotion.rules import selection_correct
from qlab.governance.records import PENDING, content_id
from qlab.project import load_project
from qlab.project.model import Case, Config

EngineFactory = Callable[[Collection], Engine]


@dataclass(frozen=True, slots=True)
class CaseInput:
    """What a case asked: its query, expected tool and Top-K (results do not carry them; cases do)."""

    case_id: str
    suite: str
    query: str
    expected_target: str | None
    k: int


def run_learning(
    artifact: Mapping[str, Any],
    *,
    config: Config | None,
    collection: Collection,
    engine_factory: EngineFactory,
    cases: Sequence[Case] | None = None,
    secrets: Iterable[str] = (),
    previous: Mapping[str, Any] | None = None,
    decisions: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The learn stage: ``{"signals", "suggestions", "shadow", "scrub"}``. Changes nothing on disk.

    ``artifact`` needs only ``cases`` (``CaseResult.to_dict()`` items, already scrubbed). ``cases`` are the
    project's cases, for each case's query and expected target; without them a case result's own ``query`` /
    ``expected_target`` keys are used. ``engine_factory(collection)`` builds the engine for shadow rank; it is
    called on copies of the collection whose Tools carry the suggested aliases, in memory. ``secrets`` are the
    run's secret values: a proposal that would contain one is withheld (and ``scrub.passed`` is false).
    ``previous`` is the run before (for the signals that compare two runs); ``decisions`` the human decisions on
    record (read from the project's files when not given and there is a config).
    """
    if not cases and config is not None:
        cases = _project_cases(config)
    if decisions is None:
        decisions = _decisions(config)
    # the inputs of the cases an alias may help (their search missed, the selector overrode wrongly); every
    # case's only when an alias is suggested, for shadow rank (a large run's inputs weigh on memory)
    flagged = {
        str(r.get("case_id"))
        for r in artifact.get("cases") or ()
        if isinstance(r, Mapping) and _alias_signal(r)
    }
    inputs = case_inputs(artifact, cases, only=flagged)
    found = signals.detect(artifact, previous=previous, decisions=decisions)
    made = suggest(artifact, collection=collection, inputs=inputs)
    run_id = artifact.get("run_id")
    aliases = [s for s in made if s["kind"] == "alias"]
    made += proposers.query_rewrites(aliases, collection, run_id)
    for signal in found:
        if signal["signal"] == "budget_breach":
            made += proposers.budget_raise(signal, run_id)
        elif signal["signal"] == "guard_violation":
            made += proposers.guard_blocks(signal, config, run_id)
    made += proposers.drift_stops([s for s in found if s["signal"] == "auth_readiness_drift"], config, run_id)
    made += proposers.eval_cases(found, artifact=artifact, previous=previous, cases=cases, config=config)
    made += proposers.entity_defaults(found, previous=previous, cases=cases, run_id=run_id)
    made, withheld = _withhold_secrets(made, secrets)
    alias_made = [s for s in made if s["kind"] == "alias"]
    rerun = []  # every case with a target, only when an alias is suggested (shadow rank reruns them)
    if alias_made:
        rerun = [
            ShadowCase(i.case_id, i.query, i.expected_target, i.k)
            for i in case_inputs(artifact, cases).values()
            if i.expected_target
        ]
    shadow = shadow_rank(alias_made, collection=collection, engine_factory=engine_factory, cases=rerun)
    for suggestion in made:
        per = shadow.get("per_suggestion", {}).get(suggestion["id"])
        if per is not None:
            suggestion["shadow"] = per
    return {
        "signals": found,
        "suggestions": made,
        "shadow": {k: v for k, v in shadow.items() if k != "per_suggestion"},
        "scrub": {"passed": withheld == 0, "withheld": withheld},
        "run_id": run_id,
        "suggestions_file": config.learning.suggestions_file if config is not None else None,
    }


def _decisions(config: Config | None) -> list[dict[str, Any]]:
    """The human decisions on record (none without a project, or when a record does not read)."""
    if config is None:
        return []
    try:
        return reviews.records(config)
    except QlabError:
        return []


def _project_cases(config: Config) -> Sequence[Case] | None:
    """The project's cases, read again from qlab.yaml's folder (the learn gate has no suites of its own)."""
    try:
        return load_project(config.path).cases
    except QlabError:
        return None  # the run already validated the project; a file changed since: learn from the results


def case_inputs(
    artifact: Mapping[str, Any], cases: Sequence[Case] | None, *, only: Container[str] | None = None
) -> dict[str, CaseInput]:
    """Each case result's query, expected target and k, from the project's cases (or the result itself);
    ``only``: of these case ids alone."""
    by_id = {c.id: c for c in cases or () if only is None or c.id in only}
    out: dict[str, CaseInput] = {}
    for result in artifact.get("cases") or ():
        case_id = str(result.get("case_id"))
        if only is not None and case_id not in only:
            continue
        case = by_id.get(case_id)
        search = result.get("search") if isinstance(result.get("search"), Mapping) else {}
        query = case.query if case is not None else result.get("query")
        expected = case.expected_target if case is not None else result.get("expected_target")
        if not isinstance(query, str) or not query:
            continue
        k = search.get("top_k") or (case.expected_top_k if case is not None else None) or 8
        out[case_id] = CaseInput(case_id, str(result.get("suite", "")), query, expected or None, int(k))
    return out


def suggest(
    artifact: Mapping[str, Any], *, collection: Collection, inputs: Mapping[str, CaseInput]
) -> list[dict[str, Any]]:
    """Alias proposals for missed search cases and wrongly overridden plan cases, and selector-policy notes."""
    results = [r for r in artifact.get("cases") or () if isinstance(r, Mapping)]
    run_id = artifact.get("run_id")
    out = _alias_suggestions(results, collection, inputs, run_id)
    out += _policy_notes(results, run_id)
    return out


# ------------------------------------------------------------------------------------------- aliases


def indexed_text(tool: Tool) -> str:
    """The text the built-in search indexes for a tool: id and name, summary, description,
    parameter names and descriptions, tags and family, aliases, method and path."""
    params = " ".join(f"{p.name} {p.description}" for p in tool.parameters)
    parts = (tool.id, tool.name, tool.summary, tool.description, params, " ".join(tool.tags), tool.family)
    return " ; ".join((*parts, *tool.aliases, tool.method or "", tool.path or ""))


def tool_terms(tool: Tool, analyzer: Analyzer) -> set[str]:
    """Every term of the tool's indexed text."""
    return set(analyzer.terms(indexed_text(tool)))


def _alias_suggestions(
    results: list[Mapping[str, Any]], collection: Collection, inputs: Mapping[str, CaseInput], run_id: Any
) -> list[dict[str, Any]]:
    analyzer = Analyzer()
    tools = collection.by_id()
    grouped: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        info = inputs.get(str(result.get("case_id")))
        # the learn gate gives inputs only where an alias may help
        if info is None or not info.expected_target:
            continue
        search = result.get("search")
        signal = _alias_signal(result)
        if not isinstance(search, Mapping) or signal is None:
            continue
        tool = tools.get(info.expected_target)
        if tool is None:
            continue  # expected_target_unknown: no tool to give an alias to
        rows = search.get("rows") or ()
        corrected = {word.lower() for row in rows for word in row.corrections}
        have = tool_terms(tool, analyzer)
        missing_words: list[str] = []
        matched: list[str] = []
        for word, term in analyzer.words(info.query):
            if not term or any(ch.isdigit() for ch in word) or word in corrected:
                continue
            (matched if term in have else missing_words).append(word)
        missing_words = list(dict.fromkeys(missing_words))
        if not missing_words:
            continue
        phrase = " ".join(missing_words)
        entry = grouped.setdefault(
            (tool.id, phrase),
            {"type": "collection_metadata", "kind": "alias", "signal": signal, "tool_id": tool.id,
             "aliases": [phrase], "evidence": []},
        )  # fmt: skip
        selector = result.get("target_selector") if signal == "selector_override" else None
        entry["evidence"].append(
            {
                **({"target_selector": selector} if selector else {}),
                "case_id": info.case_id,
                "suite": info.suite,
                "query": info.query,
                "hit_rank": search.get("hit_rank"),
                "top_k": search.get("top_k"),
                "top_rows": [
                    {"tool_id": r.tool_id, "rank": r.rank, "score": round(r.score, 4)} for r in rows[:3]
                ],
                "missing_terms": missing_words,
                "matched_terms": list(dict.fromkeys(matched)),
            }
        )
    out = []
    for (tool_id, phrase), entry in grouped.items():
        suggestion_id = content_id("sg-", {"kind": "alias", "tool_id": tool_id, "aliases": [phrase]})
        n = len(entry["evidence"])
        how = (
            "search case(s) missed it" if entry["signal"] == "search_miss" else "case(s) were sent elsewhere"
        )
        text = (
            f"Add alias {phrase!r} to {tool_id}: {n} {how}; "
            f"their queries use {phrase!r}, which the tool's indexed text lacks."
        )
        out.append({"id": suggestion_id, "status": PENDING, "run_id": run_id, "text": text, **entry})
    return out


def _alias_signal(result: Mapping[str, Any]) -> str | None:
    """Why a case may want an alias: its search missed, or the selector overrode the LLM and chose wrong."""
    search = result.get("search")
    if isinstance(search, Mapping) and search.get("hit") is False:
        return "search_miss"
    selector = result.get("target_selector")
    failure = result.get("failure") or {}
    if isinstance(selector, Mapping) and selector.get("overrode_llm") and failure.get("stage") == "select":
        return "selector_override"
    return None


# ------------------------------------------------------------------------------------------- selector policy


def _policy_notes(results: list[Mapping[str, Any]], run_id: Any) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for result in results:
        selector = result.get("target_selector")
        if not isinstance(selector, Mapping):
            continue
        codes = list(selector.get("reason_codes") or ())
        if selector.get("overrode_llm"):
            outcome = "right" if selection_correct(result) else "wrong"
            key = (str(selector.get("llm_target")), str(selector.get("selected_target")), outcome)
        elif selector.get("ambiguous") or "ambiguous_candidates" in codes:
            key = ("", ",".join(str(c) for c in selector.get("candidates") or ()), "ambiguous")
        else:
            continue
        grouped.setdefault(key, []).append(result)
    out = []
    for (llm, selected, outcome), found in grouped.items():
        content = {
            "kind": "selector_policy",
            "llm_target": llm,
            "selected_target": selected,
            "outcome": outcome,
        }
        out.append(
            {
                "id": content_id("sg-", content),
                "type": "policy",
                "signal": "selector_override",
                "status": PENDING,
                "run_id": run_id,
                **content,
                "text": _policy_text(llm, selected, outcome, len(found)),
                "evidence": [
                    {
                        "case_id": r.get("case_id"),
                        "suite": r.get("suite"),
                        "target_selector": r.get("target_selector"),
                        "failure": r.get("failure"),
                    }
                    for r in found
                ],
            }
        )
    return out


def _policy_text(llm: str, selected: str, outcome: str, n: int) -> str:
    if outcome == "right":
        return (
            f"The selector overrode the LLM target {llm} with {selected} in {n} case(s) and was right: keep the "
            f"override; descriptions or aliases that tell {selected} from {llm} would let the LLM pick it itself."
        )
    if outcome == "wrong":
        return (
            f"The selector overrode the LLM target {llm} with {selected} in {n} case(s) and was wrong: the override "
            "evidence is too weak for these queries; review the override margin (target_selector.reason_codes)."
        )
    return (
        f"The selector could not tell {selected.replace(',', ', ')} apart in {n} case(s): add distinguishing "
        "aliases or descriptions, or entities only one of them takes."
    )


def _withhold_secrets(
    suggestions: list[dict[str, Any]], secrets: Iterable[str]
) -> tuple[list[dict[str, Any]], int]:
    """Drop any suggestion whose content holds a secret value (the learn stage's scrub check)."""
    variants = [v for s in secrets if s for v in secret_variants(s)]
    if not variants:
        return suggestions, 0
    kept = [
        s
        for s in suggestions
        if not any(v in json.dumps(s, ensure_ascii=False, default=to_json) for v in variants)
    ]
    return kept, len(suggestions) - len(kept)

"""In-run checks at every stage boundary ("In-run: real-time validation at step boundaries").

After a stage ran, each check becomes a GuardResult for that stage: ``output_schema`` (every object the stage
wrote into a case matches its sub-schema of result.schema.json; feeds ``schema_validity``); ``mutation_safety``
and ``host_allowlist`` (re-checked from the runner events, independently of the execute stage); ``scrub`` (no
known secret value in the stage's objects); ``budget`` (LLM cost, tokens and wall time against qlab.yaml's
``budget``); ``citation_coverage`` and ``evidence_quality`` (execute cases with a ``claims:`` check,
``qlab.execute.claims``; a non-gating case below its minimum is named but does not fail the check).

The mode is ``block`` unless the gate's ``guards`` say ``warn``. Messages name cases, never a secret."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from qlab.adapters.scrub import Scrubber, SecretSet, scrubber, secret_variants
from qlab.contracts import metrics, resultschema
from qlab.contracts.metrics import STAGE_OBJECTS
from qlab.contracts.results import CaseResult, json_form, to_json
from qlab.execute.verdict import sensitive_values
from qlab.project.model import Budget, Case, Config, Gate
from qlab.stages.base import GuardResult

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


@dataclass(slots=True)
class SchemaTally:
    checked: int = 0
    valid: int = 0


# the subject of the execute boundary's mutation_safety and host_allowlist checks: every request that went out (the
# execute stage checks the same guards "before sending")
SENT = "requests sent"


def _mode(gate: Gate | None, guard: str) -> str:
    for g in gate.guards if gate is not None else ():
        if g.name == guard:
            return g.mode
    return "block"


def _summary(problems: Sequence[str], total: int, noun: str) -> str:
    head = "; ".join(problems[:3])
    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"{len(problems)} of {total} {noun}: {head}{more}"


def schema_check(stage: str, results: Sequence[CaseResult], tally: SchemaTally) -> tuple[bool, str]:
    """Validate the stage's objects (and any failure object) of each case against the result schema."""
    keys = STAGE_OBJECTS.get(stage, ())
    problems: list[str] = []
    checked = 0
    for result in results:
        for key in keys:
            value = getattr(result, key, None)
            if value is None:
                continue
            checked += 1
            problem = resultschema.problem(key, json_form(value), f"$.{key}")  # its search rows as dicts
            if problem:
                problems.append(f"{result.case_id}: {problem}")
        if result.failure is not None and result.failure.stage == stage:
            checked += 1
            problem = resultschema.problem("failure", result.failure.to_dict(), "$.failure")
            if problem:
                problems.append(f"{result.case_id}: {problem}")
    tally.checked += checked
    tally.valid += checked - len(problems)
    if problems:
        return False, _summary(problems, checked, "objects do not match schemas/result.schema.json")
    return True, f"{checked} object(s) match schemas/result.schema.json"


def _requests(result: CaseResult) -> list[dict[str, Any]]:
    """Every request the case sent, redirect hops included (each a ``request_sent`` event with its host)."""
    events = (result.execute or {}).get("events") or ()
    return [e for e in events if e.get("event") == "request_sent"]


def _mutates(event: Mapping[str, Any]) -> bool:
    return str(event.get("method", "GET")).upper() not in READ_METHODS


def policy_checks(
    config: Config, gate: Gate | None, results: Sequence[CaseResult], cases: Mapping[str, Case]
) -> list[GuardResult]:
    """mutation_safety and host_allowlist at the execute boundary, from what was actually sent: every hop of
    every request, not only ``base_url``. A mutating request may reach only an allowlisted host; a read, its
    environment's own host or an allowlisted one."""
    from qlab.project.model import host_allowed  # the one host matcher: the execute stage's

    unsafe: list[str] = []
    off_host: list[str] = []
    sent = 0
    for result in results:
        requests = _requests(result)
        mutating = [e for e in requests if _mutates(e)]
        env = config.environments.get(config.suites[result.suite].environment or "")
        home = _host_port(env.base_url) if env is not None else None
        allowed = env.allowed_hosts if env is not None else ()
        for event in requests:
            host = str(event.get("host") or home or "")  # an event of an older qlab has no host
            url = f"http://{host}" if host else ""
            if _mutates(event) and not host_allowed(url, allowed):
                off_host.append(f"{result.case_id}: {event.get('method')} to {host}, outside allowed_hosts")
                break
            if not _mutates(event) and host != home and not host_allowed(url, allowed):
                off_host.append(f"{result.case_id}: a read redirected to {host}, outside allowed_hosts")
                break
        if not mutating:
            continue
        sent += 1
        case = cases.get(result.case_id)
        if (
            case is None
            or case.mutation_safety != "allow_mutation"
            or not case.cleanup
            or not case.assertions
        ):
            unsafe.append(
                f"{result.case_id}: {mutating[0].get('method')} sent without allow_mutation, cleanup and assertions"
            )
    out = []
    for guard, found, noun in (
        ("mutation_safety", unsafe, "mutating cases"),
        ("host_allowlist", off_host, "cases"),
    ):
        total = sent if guard == "mutation_safety" else len(results)
        if found:
            message = _summary(found, total, noun)
        elif guard == "mutation_safety":
            message = f"{sent} mutating case(s) checked"
        else:
            message = f"every request of {len(results)} case(s) stayed on allowed hosts"
        out.append(GuardResult(guard, "execute", not found, _mode(gate, guard), message, subject=SENT))
    return out


def _host_port(url: str) -> str:
    """``host:port`` of a URL as the execute events write it (``qlab.execute.client.host_of``)."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    except ValueError:
        port = 0
    host = (parts.hostname or "").lower()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


CLAIMS_CHECKS = (
    ("citation_coverage", "citation_coverage", "min_citation_coverage", "citation_coverage_below"),
    ("evidence_quality", "evidence_quality", "min_evidence_quality", "evidence_quality_below"),
)
CHECK_NAMES = frozenset(check[0] for check in CLAIMS_CHECKS)


def below_minimum(case_id: str, record: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The claims checks a case's ``execute.claims`` record falls short of: (check, reason code, text) each."""
    out = []
    for guard, figure, floor, reason in CLAIMS_CHECKS:
        value = record.get(figure)
        if "error" in record:
            out.append((guard, reason, f"{case_id}: {record['error']}"))
        elif value is not None and value < float(record.get(floor) or 0.0):
            out.append((guard, reason, f"{case_id}: {value:g} < {record.get(floor):g}"))
    return out


def claims_checks(config: Config, gate: Gate | None, results: Sequence[CaseResult]) -> list[GuardResult]:
    """citation_coverage and evidence_quality over the execute cases that ran a claims check (none when no case
    has one). ``fail_below`` then fails the cases below their minimum where the check blocks."""
    records = [(r, (r.execute or {}).get("claims")) for r in results]
    checked = [(r, rec) for r, rec in records if isinstance(rec, Mapping)]
    if not checked:
        return []
    out = []
    for guard, _figure, floor, reason in CLAIMS_CHECKS:
        below: list[str] = []
        quiet: list[str] = []
        for result, record in checked:
            found = [text for name, _code, text in below_minimum(result.case_id, record) if name == guard]
            if not found:
                continue
            text = found[0]
            gating = (
                not result.flaky
                and result.lifecycle != "draft"
                and config.suites.get(result.suite) is not None
                and config.suites[result.suite].required
            )
            (below if gating else quiet).append(text)
        message = (
            _summary(below, len(checked), f"cases below their {floor}")
            if below
            else f"{len(checked)} case(s) checked"
        )
        if quiet:
            message += f"; not gating: {'; '.join(quiet[:3])}"
        out.append(
            GuardResult(guard, "execute", not below, _mode(gate, guard), message, "" if not below else reason)
        )
    return out


def fail_below(guards: Sequence[GuardResult], attempts: Sequence[CaseResult]) -> None:
    """A case below its claims minimum fails with the check's reason (in place) when that check blocks (its mode is
    ``block``, the default): it did not meet what it asks, so it is a real failure, which a regression case can
    come from. With ``warn`` it stays passed, named in the check's message. ``attempts``: the gating attempts."""
    blocking = {g.guard for g in guards if not g.passed and g.mode == "block" and g.guard in CHECK_NAMES}
    for result in attempts:
        record = (result.execute or {}).get("claims")
        if result.failure is not None or not isinstance(record, Mapping):
            continue
        for guard, reason, text in below_minimum(result.case_id, record):
            if guard in blocking:
                result.fail("execute", reason, f"the in-run {guard} check: {text}")
                break


def scrub_check(
    stage: str, results: Sequence[CaseResult], secrets: set[str], gate: Gate | None
) -> GuardResult:
    """No known secret value (in any encoded form) appears in the stage's case objects."""
    needles = [(i, form) for i, s in enumerate(sorted(secrets)) for form in secret_variants(s)]
    keys = (*STAGE_OBJECTS.get(stage, ()), "failure", "assertions")
    hits: list[str] = []
    if needles:
        for result in results:
            text = _scanned_text(_objects(result, keys))
            found = sorted({i for i, form in needles if form in text})
            if found:
                hits.append(f"{result.case_id}: secret #{found[0] + 1} of {len(secrets)}")
    message = (
        _summary(hits, len(results), "cases carry a secret value")
        if hits
        else (f"{len(secrets)} secret(s) checked in {len(results)} case(s)")
    )
    return GuardResult("scrub", stage, not hits, _mode(gate, "scrub"), message)


ENGINE_OBJECTS = ("search", "target_selector", "plan")  # what the engine under test's answers become
CASE_OBJECTS = (*ENGINE_OBJECTS, "execute", "auth_readiness", "learning")  # every stage object of a case
ENGINE_STAGES = frozenset({"search", "select", "plan"})


def scrub_engine_text(results: Sequence[CaseResult], secrets: set[str]) -> None:
    """Scrub what the engine under test said (search rows, the selector's reasons, plan diagnostics, an engine's
    error message) and the assertions about it, as soon as a gate's stage returns — before any check reads it
    or any byte is written. An execute case calls the engine inside the execute gate, so every gate does this.
    ``scrub_check`` stays as the second line of defence."""
    if not secrets:
        return
    clean = secrets.scrubber() if isinstance(secrets, SecretSet) else scrubber(secrets, key_rules=False)
    for result in results:
        engine_failure = result.failure is not None and result.failure.stage in ENGINE_STAGES
        _clean_result(result, clean, ENGINE_OBJECTS, failure=engine_failure)


def _clean_result(result: CaseResult, clean: Scrubber, objects: Sequence[str], *, failure: bool) -> None:
    """``result``'s stage objects ``objects``, its failure message (when ``failure``) and its assertions
    through ``clean``, in place."""
    for key in objects:
        value = getattr(result, key, None)
        if value is not None:
            setattr(result, key, clean(value))
    if failure and result.failure is not None:
        result.failure.message = clean.text(result.failure.message)
    for item in result.assertions:
        item.message, item.expected, item.actual = (
            clean.text(item.message),
            clean(item.expected),
            clean(item.actual),
        )


def scrub_provided_entities(
    cases: Sequence[Case], attempts: Callable[[str], Sequence[CaseResult]], fields: Sequence[str]
) -> None:
    """A case's provided entity for a sensitive field (``Config.sensitive_fields``: the identity fields unless
    opted out, and those qlab.yaml names) is replaced by value in everything the case recorded — every stage
    object, its failure, its assertions — so ``u-777`` given as ``userId`` reaches no output, wherever the case
    echoes it (a query word, a path, a message); under its key every writer replaces it anyway. A number is
    replaced in text only, as a whole number: a JSON number equal to it may be a rank, a count or a status."""
    if not fields:
        return
    for case in cases:
        if not case.provided_entities:
            continue
        values = sensitive_values(dict(case.provided_entities), fields)
        if not values:
            continue
        clean = scrubber(values, key_rules=False, max_chars=0, json_numbers=False)
        for result in attempts(case.id):
            _clean_result(result, clean, CASE_OBJECTS, failure=True)


def _scanned_text(objects: Sequence[Any]) -> str:
    """The text the scrub check searches: each object as JSON, every byte of its search rows included."""
    return "\n".join(
        json.dumps(item.to_dict() if hasattr(item, "to_dict") else item, default=to_json) for item in objects
    )


def _objects(result: CaseResult, keys: Sequence[str]) -> list[Any]:
    out: list[Any] = []
    for key in keys:
        value = getattr(result, key, None)
        if key == "assertions":
            out.extend(value or ())
        elif value is not None:
            out.append(value)
    return out


def llm_usage(results: Sequence[CaseResult]) -> tuple[float, int]:
    """Total LLM cost (USD) and tokens recorded in the target selector blocks so far."""
    tokens, cost = metrics.llm_usage({"target_selector": r.target_selector} for r in results)
    return cost, tokens


def budget_check(
    config: Config,
    stage: str,
    results: Sequence[CaseResult],
    *,
    started: float,
    gate: Gate | None,
    judged: dict[str, str] | None = None,
) -> GuardResult | None:
    """The run's budget so far; None when qlab.yaml sets no budget (see ``over_budget``)."""
    budget = config.budget
    if budget.max_llm_cost_usd is None and budget.max_llm_tokens is None and budget.max_duration_sec is None:
        return None
    cost, tokens = llm_usage(results)
    passed, message = over_budget(
        budget,
        cost=cost,
        tokens=tokens,
        seconds=time.monotonic() - started,
        where=gate.name if gate is not None else stage,
        judged=judged,
    )
    return GuardResult("budget", stage, passed, _mode(gate, "budget"), message)


def over_budget(
    budget: Budget, *, cost: float, tokens: int, seconds: float, where: str, judged: dict[str, str] | None
) -> tuple[bool, str]:
    """The budget check at gate ``where`` after ``cost`` USD, ``tokens`` and ``seconds``: (passed, message).

    A limit the run went over is judged once, by the gate whose boundary found it first, in that gate's mode:
    the budget is the run's, so a later gate would otherwise find the same overrun again and block where the gate
    that found it was set to ``warn``. ``judged`` (limit → gate name) keeps track across the run's gates; a later
    gate's check names the limit still exceeded and passes, unless it finds a limit crossed since."""
    over: dict[str, str] = {}
    if budget.max_llm_cost_usd is not None and cost > budget.max_llm_cost_usd:
        over["max_llm_cost_usd"] = f"LLM cost ${cost:.4f} > ${budget.max_llm_cost_usd:g}"
    if budget.max_llm_tokens is not None and tokens > budget.max_llm_tokens:
        over["max_llm_tokens"] = f"LLM tokens {tokens} > {budget.max_llm_tokens}"
    if budget.max_duration_sec is not None and seconds > budget.max_duration_sec:
        over["max_duration_sec"] = f"run time {seconds:.1f}s > {budget.max_duration_sec:g}s"
    seen = judged if judged is not None else {}
    new = [key for key in over if key not in seen]
    for key in new:
        seen[key] = where
    if new:
        return False, "budget_exceeded: " + "; ".join(over[k] for k in new)
    if over:
        found = ", ".join(f"{over[k]} (judged at gate {seen[k]})" for k in over)
        return True, f"still over budget, judged once where it was found: {found}"
    return True, f"within budget: ${cost:.4f}, {tokens} tokens, {seconds:.1f}s"

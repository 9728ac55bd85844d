"""Every stable reason code qlab writes, with the stage it belongs to, its troubleshooting hint, and the
outcome it leads to.

Codes are verbatim from the Quality Lab and eval-gates specifications where they name them. The hints come from the troubleshooting
table. Docs, the Markdown summary and annotations all read this one table.

``outcome`` says what a case failing with the code means for the run (the decision rule, ``qlab.run.gates``):
``block`` — the product failed a check (it counts against its gate); ``error`` — an infrastructure fault kept
qlab from judging the case (an LLM endpoint, engine, environment, dev server or spec URL that could not be
reached): the run's verdict is ERROR (exit 2), never BLOCK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["block", "error"]


@dataclass(frozen=True, slots=True)
class Reason:
    code: str
    stage: str
    meaning: str
    hint: str
    outcome: Outcome = "block"


_R = Reason
REASONS: dict[str, Reason] = {
    r.code: r
    for r in (
        # build
        _R(
            "schema_coverage_below",
            "build",
            "collection schema coverage is below the gate's threshold",
            "Inspect the readiness report: add summaries, parameter descriptions and response schemas to the tools listed.",
        ),
        _R(
            "spec_invalid",
            "build",
            "a collection source could not be read or is not a valid spec",
            "Fix the source at the location given.",
            "error",
        ),
        _R(
            "spec_fetch_failed",
            "build",
            "a collection source URL could not be fetched (DNS, connection refused, timeout, HTTP error)",
            "Check the URL and that the server hosting the spec answers; nothing was judged, so run again once it does.",
            "error",
        ),
        # search
        _R(
            "expected_target_absent",
            "search",
            "the expected target is not in the Top-K",
            "Check the tool's summary, description and aliases; compare the query terms with the row evidence.",
        ),
        _R(
            "expected_target_unknown",
            "search",
            "the expected target is not a tool of the collection",
            "The case names a tool id the collection does not have: fix the case or the source.",
        ),
        # select
        _R(
            "llm_unreachable",
            "select",
            "the LLM endpoint (engine.llm.base_url) could not be reached or refused the call",
            "Check that the endpoint is up and engine.llm.base_url / api_key_env are right; nothing was judged, so run again once it answers.",
            "error",
        ),
        _R(
            "wrong_target_selected",
            "select",
            "the selector chose another target than expected",
            "LLM target differs from selected target: strong selector evidence overrode it or ambiguity was detected; read target_selector.reason_codes.",
        ),
        _R(
            "ambiguous_critical",
            "select",
            "the selector could not tell the top candidates apart on a critical case",
            "Add distinguishing aliases or descriptions to the candidates, or provide entities that only one fits.",
        ),
        # plan
        _R(
            "required_fields_unsatisfied",
            "plan",
            "the plan needs inputs that no entity or earlier step provides",
            "Search passes but plan fails: required fields are unsatisfied; inspect plan.user_input_slots and the IO contracts.",
        ),
        _R(
            "plan_tools_mismatch",
            "plan",
            "the plan's tools differ from the expected ones",
            "Compare plan.steps with the case's expectations; check the IO contracts that chained the steps.",
        ),
        _R("plan_failed", "plan", "plan synthesis failed", "Read plan.diagnostics."),
        # execute: auth readiness
        _R(
            "auth_context_required",
            "execute",
            "no usable runtime user/session context",
            "Plan passes but execute fails: provide the runtime context (the env vars the auth profile reads).",
        ),
        _R(
            "auth_profile_missing",
            "execute",
            "the collection requires auth but has no auth profile",
            "Add an auth profile to qlab.yaml and reference it from the environment or the collection.",
        ),
        _R(
            "auth_header_resolution_failed",
            "execute",
            "the adapter could not resolve execution headers",
            "Check the auth profile's token command or token endpoint; run it by hand.",
        ),
        _R(
            "auth_failed",
            "execute",
            "the downstream API returned 401 or 403",
            "Execute returns 401/403: runtime auth reached the API but was rejected; check the auth profile and the API's policy.",
        ),
        # execute: safety
        _R(
            "mutation_not_allowed",
            "execute",
            "a mutating request without mutation_safety: allow_mutation",
            "Keep the case in search or plan mode, or add mutation_safety: allow_mutation with cleanup and assertions.",
        ),
        _R(
            "host_not_allowed",
            "execute",
            "the target host is not in the environment's allowlist",
            "Mutations run only against dev hosts: add the host to environments.<name>.allowed_hosts if it is one.",
        ),
        _R(
            "redirect_refused",
            "execute",
            "the API answered with a redirect qlab does not follow",
            "A request that may change data is never redirected, and a read only to its own origin or an "
            "allowed host: point base_url at the final address, or add that host to allowed_hosts if it is one "
            "(its credentials are still dropped there).",
        ),
        _R(
            "cleanup_missing",
            "execute",
            "a mutating case without cleanup steps or assertions",
            "Add cleanup steps that undo the mutation, and assertions.",
        ),
        # execute: transport and response
        _R(
            "timeout",
            "execute",
            "the case took longer than its timeout_sec: one deadline for the whole case (every engine call, request, retry and redirect of it)",
            "Raise timeout_sec or look at the latency of the API or the engine.",
        ),
        _R(
            "connection_error",
            "execute",
            "the connection to the API failed during the run (refused, reset or closed mid-answer)",
            "Is the server running at the environment's base_url, and did it crash on this request (see its log)? An environment that never answered is caught before the run (environment_unreachable).",
        ),
        _R(
            "environment_unreachable",
            "execute",
            "a configured environment's base_url does not take a connection (DNS failure, connection refused)",
            "Start the environment (or give it a server: block so qlab starts it) and check its base_url; checked before any case runs.",
            "error",
        ),
        _R(
            "dev_server_failed",
            "execute",
            "the environment's dev server (environments.<name>.server) did not start or never answered its url",
            "Read the server log named in the message (server-<env>.log beside the result); run the server command by hand.",
            "error",
        ),
        _R(
            "tls_error",
            "execute",
            "TLS handshake or certificate failure",
            "Check the certificate chain of the host.",
        ),
        _R(
            "http_error",
            "execute",
            "the API answered with an unexpected error status",
            "Plan passes but execute fails: auth or request adapter issue; inspect the runner events.",
        ),
        _R(
            "assertion_failed",
            "execute",
            "the API was reached but an assertion failed",
            "Execute succeeds but assertions fail: API reached but returned the wrong shape; check the response schema and assertion paths.",
        ),
        _R(
            "schema_mismatch",
            "execute",
            "the response does not match the tool's response schema",
            "Execute succeeds but assertions fail: check the response schema in the spec against what the API returns.",
        ),
        _R(
            "invalid_json",
            "execute",
            "the response body is not valid JSON, or holds what strict JSON cannot (NaN, Infinity, a number beyond a double, a lone UTF-16 surrogate)",
            "Check the content type and body the API returns.",
        ),
        _R(
            "response_too_large",
            "execute",
            "the response body, decoded, is larger than limits.response_mib (a compressed body counts at its decoded size); qlab stopped reading it",
            "Check why the API answers this much (a missing page size, a compression bomb); raise limits.response_mib in qlab.yaml if the size is expected.",
        ),
        _R(
            "environment_missing",
            "execute",
            "the suite names no usable environment",
            "Set suites.<name>.environment.",
        ),
        _R(
            "citation_coverage_below",
            "execute",
            "claims in a response do not cite existing evidence items as often as the case's min_citation_coverage asks (the in-run citation_coverage check)",
            "Read execute.claims.problems: which claims cite nothing or an id the evidence list lacks; check the claims check's JSONPaths.",
        ),
        _R(
            "evidence_quality_below",
            "execute",
            "too few of a response's evidence items are usable: an id, a source and an excerpt, cited by a claim, not a duplicate (the in-run evidence_quality check)",
            "Read execute.claims.problems for the items that lack a source or an excerpt, duplicate another or are cited by no claim.",
        ),
        # learn
        _R(
            "scrub_failed",
            "learn",
            "a secret value was found in an output artifact",
            "Payload scrubbing fails: report this as a bug; rotate the leaked secret.",
        ),
        _R(
            "not_replayed",
            "learn",
            "the sandbox did not replay this execute case: it sends no request, and no stored run executed the plan the proposal leads to",
            "Run it as a draft (qlab run), then run the sandbox again with that result (qlab learn sandbox --result).",
        ),
        _R(
            "improves_in_shadow_only",
            "learn",
            "the case fails in the run, and passes in shadow rank with a pending learning suggestion applied",
            "Results improve in shadow only: the learning suggestion is not promoted; see the promotion policy and "
            "the Quality Lab approval: review it (qlab learn list), accept it (qlab learn accept), then confirm with "
            "qlab run and qlab promote.",
        ),
        _R(
            "shadow_regressed",
            "learn",
            "a pending learning suggestion ranks this case worse in shadow rank",
            "Do not accept the suggestion as it is: its sandbox eval names the cases it makes worse (qlab learn sandbox).",
        ),
        # generic
        _R("blocked_by_stage", "run", "an earlier gate blocked the run", "Fix the gate that blocked first."),
        _R(
            "cancelled",
            "run",
            "the run was cancelled (SIGINT or SIGTERM) before this case finished; its cleanup ran",
            "Nothing was judged for this case: run again (qlab run --last-failed runs the cases that did not pass).",
            "error",
        ),
        _R(
            "stopped_by_error",
            "run",
            "the run stopped at an infrastructure fault before this case ran",
            "Fix the error reported first (a pre-run check or a gate's error) and run again.",
            "error",
        ),
        _R(
            "engine_unreachable",
            "run",
            "the engine service (engine.url) could not be reached",
            "Start the engine service or fix engine.url; nothing was judged, so run again once it answers.",
            "error",
        ),
        _R(
            "engine_error",
            "run",
            "the engine under test returned an error or an invalid reply",
            "Check the engine's logs and its reply against schemas/engine-*.schema.json.",
        ),
        _R(
            "skill_binding_unknown",
            "run",
            "a release skill names a permission or a tool the collection does not declare (a tool id, family or tag)",
            "Fix the name in qlab.yaml or the skill's case files; the message says which name was meant.",
            "error",
        ),
        _R(
            "policy_unpublished",
            "run",
            "the result a release is judged on was not judged under the policy in force (qlab.yaml changed since the run), or the release names no regression suite that every run runs",
            "Run `qlab run` again with the qlab.yaml the release uses, then approve and release that result.",
            "error",
        ),
        _R(
            "run_not_passed",
            "run",
            "a release was asked for a result whose decision is not PASS: the run blocked, or could not decide",
            "Fix what the run's decision names, run `qlab run` again, and release a result that PASSed.",
            "error",
        ),
        _R(
            "artifact_inconsistent",
            "run",
            "a stored result's decision, gate verdicts or metrics disagree with its own case records (edited after the run?)",
            "Do not use it: take the result from the job that wrote it (an artifact is only as trustworthy as the storage it came from), or run qlab again.",
            "error",
        ),
        _R(
            "budget_exceeded",
            "run",
            "the run's budget (LLM cost, tokens or time) was exceeded",
            "Raise budget or reduce the suite.",
        ),
        _R(
            "flaky",
            "run",
            "a flaky case failed; it is reported but does not gate",
            "Stabilize it or keep it flaky.",
        ),
    )
}


# the codes that mean "qlab could not judge": a run with one of them is ERROR (exit 2), never BLOCK
INFRA_REASONS: frozenset[str] = frozenset(code for code, r in REASONS.items() if r.outcome == "error")
# auth readiness failed before any request (no request was sent) ...
AUTH_PREFLIGHT: frozenset[str] = frozenset(
    {"auth_context_required", "auth_profile_missing", "auth_header_resolution_failed"}
)
# ... or at run time, the API rejecting the request (401/403): every one is an auth failure for the
# ``auth_not_ready`` stop condition and for the learning loop's readiness drift
AUTH_FAILURES: frozenset[str] = AUTH_PREFLIGHT | {"auth_failed"}


def hint(code: str) -> str:
    reason = REASONS.get(code)
    return reason.hint if reason else ""


def is_infrastructure(code: object) -> bool:
    """True for a reason code whose outcome is ``error`` (an infrastructure fault, not a product failure)."""
    return code in INFRA_REASONS

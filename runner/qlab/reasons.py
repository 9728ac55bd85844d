"""Every stable reason code qlab writes, with the stage it belongs to and its troubleshooting hint.

Codes are verbatim from the seeds where the seeds name them. The hints come from seed 000's troubleshooting
table. Docs, the Markdown summary and annotations all read this one table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reason:
    code: str
    stage: str
    meaning: str
    hint: str


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
            "a collection source could not be read",
            "Fix the source at the location given.",
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
        # execute: auth readiness (seed 000)
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
            "the request took longer than timeout_sec",
            "Raise timeout_sec or look at the API's latency.",
        ),
        _R(
            "connection_error",
            "execute",
            "the API could not be reached",
            "Is the server running at the environment's base_url?",
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
            "the response body is not valid JSON",
            "Check the content type and body the API returns.",
        ),
        _R(
            "environment_missing",
            "execute",
            "the suite names no usable environment",
            "Set suites.<name>.environment.",
        ),
        # learn
        _R(
            "scrub_failed",
            "learn",
            "a secret value was found in an output artifact",
            "Payload scrubbing fails: report this as a bug; rotate the leaked secret.",
        ),
        _R(
            "shadow_regressed",
            "learn",
            "a learning suggestion made shadow results worse",
            "Results improve in shadow only: the suggestion is not promoted; review it before accepting.",
        ),
        # generic
        _R("blocked_by_stage", "run", "an earlier gate blocked the run", "Fix the gate that blocked first."),
        _R(
            "engine_error",
            "run",
            "the engine under test returned an error or an invalid reply",
            "Check the engine's logs and its reply against schemas/engine-*.schema.json.",
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


def hint(code: str) -> str:
    reason = REASONS.get(code)
    return reason.hint if reason else ""

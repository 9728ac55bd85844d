"""One execute case, start to finish: safety → auth preflight → plan steps → assertions → cleanup → record.

``CaseRunner.run`` never raises for a case's own trouble: every failure becomes exactly one reason code on the
CaseResult. The only exception it lets out is KeyboardInterrupt, after the case's cleanup has run. Cleanup runs
whenever a request of the case was sent — after a failed assertion, a timeout or Ctrl-C — with a fresh
``timeout_sec`` budget, and each cleanup step's outcome is recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from qlab.adapters import http, jsonpath
from qlab.adapters.scrub import Scrubber, SecretSet, scrubber
from qlab.collection.model import MutationClass, Tool
from qlab.contracts.errors import InputError
from qlab.contracts.results import CaseResult
from qlab.engine.types import Plan
from qlab.execute import assertions, claims, safety, verdict
from qlab.execute.assertions import ResponseView
from qlab.execute.auth import NOT_REQUIRED, AuthResolution, AuthResolver, combined, requires_auth
from qlab.execute.cleanup import run_cleanup
from qlab.execute.client import Exchange, Redirects, RetryPolicy, TransportFailure, send
from qlab.execute.credentials import BaseURL
from qlab.execute.record import STAGE, CaseState, display_path, record
from qlab.execute.request import (
    PreparedRequest,
    RequestError,
    build_request,
    resolve_arguments,
)
from qlab.project.model import Case, Environment, Limits


def _claims_record(view: ResponseView, case: Case) -> dict[str, Any]:
    """The in-run claims check of the final response (``qlab.execute.claims``); the boundary guards judge it."""
    assert case.claims is not None
    if view.json_error is not None:
        return {"error": f"the response is not JSON: {view.json_error}", "passed": False}
    return claims.check(view.json(), case.claims)


class CaseRunner:
    """Runs cases against one run's client, auth resolver and collection. Safe to share between threads."""

    def __init__(
        self,
        *,
        client: http.Client,
        tools: Mapping[str, Tool],
        resolver: AuthResolver,
        collection_profile: str | None = None,
        add_secrets: Callable[[Iterable[str]], None] = lambda _s: None,
        cancel: threading.Event | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_bytes: int = Limits().response_bytes,
    ) -> None:
        self.client = client
        self.max_bytes = max_bytes
        self.tools = tools
        self.resolver = resolver
        self.collection_profile = collection_profile
        self.add_secrets = add_secrets
        self.cancel = cancel or threading.Event()
        self.sleep = sleep
        self._secrets_lock = threading.Lock()
        self._secrets = SecretSet()
        self._policies: dict[str, RetryPolicy] = {}
        self._bases: dict[str, BaseURL] = {}
        self._scrubbers: dict[tuple[int, tuple[str, ...]], Scrubber] = {}

    def _retry(self, env: Environment) -> RetryPolicy:
        policy = self._policies.get(env.name)
        if policy is None:
            policy = self._policies[env.name] = RetryPolicy.of(env)
        return policy

    def base(self, env: Environment) -> BaseURL:
        """The environment's base URL without userinfo (whose credentials are registered as secrets)."""
        known = self._bases.get(env.name)
        if known is None:
            known = self._bases[env.name] = BaseURL.of(env.base_url)
            self._secret(known.secrets)
        return known

    def _scrubber(self, env: Environment, extra: set[str]) -> Scrubber:
        """The scrubber for a case: run secrets + the case's own sensitive values (cached when it has none)."""
        # secrets only ever grow, so their count is their version: no copy of the set on the hot path
        key = (len(self._secrets), env.sensitive_fields)
        cached = None if extra else self._scrubbers.get(key)
        if cached is not None:
            return cached
        with self._secrets_lock:
            secrets = frozenset(self._secrets)
        if extra:
            return scrubber(secrets | extra, sensitive_fields=env.sensitive_fields)
        cached = self._scrubbers[(len(secrets), env.sensitive_fields)] = scrubber(
            secrets, sensitive_fields=env.sensitive_fields
        )
        return cached

    def _secret(self, values: Iterable[str]) -> None:
        fresh = [v for v in values if v and v not in self._secrets]
        if fresh:
            with self._secrets_lock:
                self._secrets.update(fresh)
            self.add_secrets(fresh)  # the run's SecretSet registers each with its parts too

    def run(self, case: Case, plan: Plan, env: Environment, result: CaseResult) -> None:
        """Execute ``case`` with ``plan`` against ``env`` and fill ``result`` (execute, auth_readiness,
        assertions, latency, failure)."""
        started = time.perf_counter()
        # one deadline for the whole case: what its search, selection and plan took is already spent
        spent = sum(result.latency_ms.get(k, 0.0) for k in ("search", "target_selection", "plan")) / 1000
        state = CaseState(deadline=time.monotonic() + case.timeout_sec - spent)
        latency = 0.0
        try:
            try:
                self._main(case, plan, env, result, state)
            except KeyboardInterrupt:
                result.fail(
                    STAGE,
                    "cancelled",
                    "cancelled (SIGINT or SIGTERM) before the case finished; its cleanup ran",
                    status="skipped",
                )
                raise
            except Exception as exc:  # a bug or an unforeseen input must not take the other cases down
                result.fail(
                    STAGE,
                    "http_error",
                    f"unexpected error while executing: {type(exc).__name__}: {exc}",
                    status="error",
                )
            finally:
                latency = (time.perf_counter() - started) * 1000
                if state.sent and case.cleanup:
                    run_cleanup(self, case, env, result, state)
        finally:
            record(plan, env, result, state, latency, clean=self._scrubber(env, state.secret_values))

    # ------------------------------------------------------------------------------------------ the case

    def _main(self, case: Case, plan: Plan, env: Environment, result: CaseResult, state: CaseState) -> None:
        step_tools: list[Tool] = []
        for index, step in enumerate(plan.steps):
            tool = self.tools.get(step.tool_id)
            if tool is None:
                result.fail(
                    STAGE,
                    "http_error",
                    f"plan step {index} names tool {step.tool_id!r}, which the collection does not have",
                )
                return
            step_tools.append(tool)
        if not step_tools:
            result.fail(STAGE, "http_error", "the plan has no steps to execute")
            return
        cleanup_tools = [self.tools.get(c.tool) if c.tool else None for c in case.cleanup]
        if not case.cleanup and all(safety.reads(t.method, t.mutation) for t in step_tools):
            state.safety = safety.READ_ONLY  # the common case, without building PlannedCalls
        else:
            calls = [
                safety.PlannedCall(f"step {i} {t.id}", t.method, t.mutation) for i, t in enumerate(step_tools)
            ]
            for j, (c, t) in enumerate(zip(case.cleanup, cleanup_tools, strict=True)):
                method = t.method if t else (c.method or "DELETE")
                label = f"cleanup {j} {t.id if t else method}"
                calls.append(safety.PlannedCall(label, method, t.mutation if t else MutationClass.READ_ONLY))
            state.safety = safety.check(case, calls, base_url=env.base_url, allowed_hosts=env.allowed_hosts)
        if not state.safety.allowed:
            result.fail(STAGE, state.safety.reason or "mutation_not_allowed", state.safety.message)
            return
        state.auth = self._preflight(env, state, step_tools, cleanup_tools)
        if state.auth.status != "not_required":
            self._secret(self.resolver.secrets)
        result.auth_readiness = state.auth.readiness()
        if not state.auth.ready:
            result.fail(STAGE, state.auth.reason or "auth_context_required", state.auth.message)
            return
        if env.sensitive_fields and case.provided_entities:
            state.secret_values |= verdict.sensitive_values(
                dict(case.provided_entities), env.sensitive_fields
            )
        last = len(plan.steps) - 1
        for index, (step, tool) in enumerate(zip(plan.steps, step_tools, strict=True)):
            if self.cancel.is_set():
                if not state.sent:  # nothing reached the API: the case did not run
                    result.status = "skipped"
                    return
                result.fail(
                    STAGE,
                    "http_error",
                    "interrupted by Ctrl-C before the case finished; cleanup ran",
                    status="error",
                )
                return
            try:
                arguments = resolve_arguments(step, outputs=state.outputs, captures=state.captures)
                request = build_request(tool, arguments, base_url=self.base(env).url, headers=env.headers)
            except (RequestError, InputError) as exc:
                result.fail(STAGE, "http_error", f"step {index} {tool.id}: {exc}")
                return
            exchange = self.send_one(request, case, env, state, step=str(index), deadline=state.deadline)
            if exchange is None:
                result.fail(STAGE, state.steps[-1]["error"], state.steps[-1]["message"])
                return
            view = ResponseView(exchange.status, exchange.headers, exchange.body, exchange.latency_ms, tool)
            self._absorb(case, env, state, view)
            state.final = view
            reason = verdict.status_reason(exchange.status, case.assertions, final=index == last)
            if reason is not None:
                result.fail(
                    STAGE,
                    reason,
                    f"step {index} {tool.id}: {request.method} {state.steps[-1]['path']} answered {exchange.status}",
                )
                if index != last:
                    return
        if state.final is not None:
            # the final response's assertions are recorded even when its status already failed the case
            self._assert(case, result, state, state.final)
            if case.claims is not None:
                state.claims = _claims_record(state.final, case)

    def _preflight(
        self, env: Environment, state: CaseState, steps: list[Tool], cleanup: list[Tool | None]
    ) -> AuthResolution:
        """Each tool's auth, kept in ``state.auths`` for its requests: what its operation-level security picks
        (``AuthResolver.choose``), else the environment's profile (else the collection's), which also serves
        cleanup steps that name no tool. Returns the case's readiness: all of them together."""
        tools = list({tool.id: tool for tool in [*steps, *(t for t in cleanup if t)]}.values())
        chosen = {tool.id: self.resolver.choose(tool) for tool in tools}
        rest = [tool for tool in tools if chosen[tool.id] is None]
        fallback = NOT_REQUIRED
        if rest or None in cleanup:
            needs_auth = requires_auth(rest, collection_profile=self.collection_profile)
            fallback = self.resolver.preflight(env.auth or self.collection_profile, required=needs_auth)
        state.auths = {tool_id: resolved or fallback for tool_id, resolved in chosen.items()}
        state.auths[""] = fallback
        return combined([*state.auths.values()])

    def send_one(
        self,
        request: PreparedRequest,
        case: Case,
        env: Environment,
        state: CaseState,
        *,
        step: str,
        deadline: float,
    ) -> Exchange | None:
        """Send one request of the case (a plan or cleanup step) with its auth and cookies, record it in the
        case's steps or cleanup list; None when it was never answered (the record says why)."""
        auth = state.auths.get(request.tool_id or "", state.auths.get(""))
        headers = dict(auth.headers) if auth else {}
        basic = self.base(env).basic
        if basic and not any(k.lower() == "authorization" for k in (*headers, *request.headers)):
            headers["Authorization"] = basic  # base_url's userinfo, unless the profile authorizes itself
        if state.cookies:
            jar = "; ".join(f"{k}={v}" for k, v in state.cookies.items())
            own = request.headers.get("Cookie")
            headers["Cookie"] = f"{own}; {jar}" if own else jar
        params = dict(auth.params) if auth else {}
        path = display_path(request, secret_params=params)
        record: dict[str, Any] = {"tool": request.tool_id, "method": request.method, "path": path}
        if request.ignored:
            record["ignored_arguments"] = list(request.ignored)
        target = state.steps if not step.startswith("cleanup") else state.cleanup
        target.append(record)
        state.sent = True  # from here on the request may reach the server: cleanup must run
        follow = env.follow_redirects if case.follow_redirects is None else case.follow_redirects
        tool = self.tools.get(request.tool_id or "")
        reads = safety.reads(request.method, tool.mutation if tool else MutationClass.READ_ONLY)
        try:
            exchange = send(
                self.client,
                request,
                deadline=deadline,
                redirects=Redirects(follow, reads, env.allowed_hosts),
                retry=self._retry(env),
                events=state.events,
                step=step,
                display_path=path,
                auth_headers=headers,
                auth_params=params,
                sleep=self.sleep,
                max_bytes=self.max_bytes,
            )
        except TransportFailure as exc:
            record.update(status=None, error=exc.reason, message=str(exc), attempts=exc.attempts)
            return None
        record.update(
            status=exchange.status, latency_ms=round(exchange.latency_ms, 3), bytes=len(exchange.body)
        )
        if exchange.attempts > 1:
            record["attempts"] = exchange.attempts
        if exchange.cookies:
            state.cookies.update(exchange.cookies)
            self._secret(exchange.cookies.values())
        return exchange

    def _absorb(self, case: Case, env: Environment, state: CaseState, view: ResponseView) -> None:
        """Keep the step's JSON for later bindings, take its captures and sensitive values."""
        document = view.json() if view.json_error is None else None
        state.outputs.append(document)
        if document is None:
            return
        for capture in case.captures:
            try:
                values = jsonpath.find(capture.path, document)
            except InputError:
                continue
            if values:
                state.captures[capture.name] = values[0]
        if env.sensitive_fields:
            state.secret_values |= verdict.sensitive_values(document, env.sensitive_fields)

    def _assert(self, case: Case, result: CaseResult, state: CaseState, view: ResponseView) -> None:
        checked = [assertions.evaluate(item, view) for item in case.assertions]
        for item, outcome in zip(case.assertions, checked, strict=True):
            event: dict[str, Any] = {"type": item.type, "passed": outcome.passed}
            if outcome.path:
                event["path"] = outcome.path
            state.events.add("assertion", **event)
            outcome.actual = verdict.compact(outcome.actual)
        result.assertions = [*result.assertions, *checked]
        failed = verdict.assertion_reason(case.assertions, checked, view)
        if failed is not None:
            result.fail(STAGE, failed[0], failed[1])

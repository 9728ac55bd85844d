"""Promotion rules: the five change types, their default evidence, and per-case metric values.

``DEFAULT_RULES`` holds each change type's default ``require`` (the promotion policy's table, also in
docs/governance.md). ``no_required_regression`` is always checked on top of a rule: a required case that
regressed blocks. A rule in qlab.yaml (``promotion.<type>``) replaces the default for its type (``rule_for``).
``case_metric`` gives the per-case value of a metric the rules compare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts import metrics
from qlab.contracts.errors import UsageError
from qlab.project.model import Config, PromotionRule

CHANGE_TYPES: tuple[str, ...] = (
    "alias_or_semantic_metadata",
    "selector_override_policy",
    "contract_extraction_change",
    "learning_suggestion_promotion",
    "execute_enablement",
)

DEFAULT_RULES: dict[str, PromotionRule] = {
    "alias_or_semantic_metadata": PromotionRule(
        "alias_or_semantic_metadata",
        require=("metric_not_worse", "no_required_regression"),
        metrics=("hit_at_k", "top_1", "mrr"),
    ),
    "selector_override_policy": PromotionRule(
        "selector_override_policy",
        require=("plan_target_correct", "metric_not_worse", "no_required_regression"),
        metrics=("selector_accuracy",),
    ),
    "contract_extraction_change": PromotionRule(
        "contract_extraction_change", require=("readiness_improves", "no_required_regression")
    ),
    "learning_suggestion_promotion": PromotionRule(
        "learning_suggestion_promotion", require=("shadow_improves", "scrub_passes", "no_required_regression")
    ),
    "execute_enablement": PromotionRule(
        "execute_enablement", require=("auth_ready", "read_assertions_pass", "no_required_regression")
    ),
}

# Which case mode a change type is about, when its rule names no suites.
CHANGE_MODES: dict[str, str | None] = {
    "alias_or_semantic_metadata": "search",
    "selector_override_policy": "plan",
    "contract_extraction_change": None,
    "learning_suggestion_promotion": None,
    "execute_enablement": "execute",
}

REQUIREMENTS: tuple[str, ...] = (
    "no_regression",
    "no_required_regression",
    "metric_not_worse",
    "plan_target_correct",
    "readiness_improves",
    "shadow_improves",
    "scrub_passes",
    "auth_ready",
    "read_assertions_pass",
)

SAME_KEYS: tuple[str, ...] = ("cases", "case_set", "collection", "model", "engine", "config")


def rule_for(change_type: str, config: Config | None) -> PromotionRule:
    """The rule for ``change_type``: qlab.yaml's when it has one, else the built-in default.

    Raises UsageError for an unknown change type (with a suggestion) and for a rule naming an unknown
    requirement or ``same`` key.
    """
    configured: Mapping[str, PromotionRule] = config.promotion if config is not None else {}
    rule = configured.get(change_type) or DEFAULT_RULES.get(change_type)
    if rule is None:
        known = sorted({*CHANGE_TYPES, *configured})
        raise UsageError(
            f"unknown change type {change_type!r}.{did_you_mean(change_type, known)} Known: {', '.join(known)}"
        )
    for name in rule.require:
        if name not in REQUIREMENTS:
            raise UsageError(
                f"promotion.{change_type}.require: unknown requirement {name!r}.{did_you_mean(name, REQUIREMENTS)}"
            )
    for name in rule.same:
        if name not in SAME_KEYS:
            raise UsageError(
                f"promotion.{change_type}.same: unknown key {name!r}.{did_you_mean(name, SAME_KEYS)}"
            )
    return rule


# ------------------------------------------------------------------------------------------- per-case metrics


def _search(case: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The case's search object when search measured it (``qlab.contracts.metrics.measured``), else None."""
    search = case.get("search")
    return search if isinstance(search, Mapping) and metrics.measured(case, "search") else None


def _hit_at_k(case: Mapping[str, Any]) -> float | None:
    search = _search(case)
    return None if search is None else float(bool(search.get("hit")))


def _top_1(case: Mapping[str, Any]) -> float | None:
    search = _search(case)
    return None if search is None else float(bool(search.get("hit")) and search.get("hit_rank") == 1)


def _mrr(case: Mapping[str, Any]) -> float | None:
    search = _search(case)
    if search is None:
        return None
    rank = search.get("hit_rank")
    return 1.0 / rank if search.get("hit") and isinstance(rank, int) and rank > 0 else 0.0


def selection_correct(case: Mapping[str, Any]) -> bool | None:
    """Did the selector choose the expected target? None when the case has no target_selector object."""
    selector = case.get("target_selector")
    if not isinstance(selector, Mapping):
        return None
    if isinstance(selector.get("correct"), bool):
        return bool(selector["correct"])
    return selector.get("selected_target") is not None and not metrics.failed_at(case, "select")


def _selector_accuracy(case: Mapping[str, Any]) -> float | None:
    """As the run counts it: a case that failed before select is a miss of select too."""
    if not metrics.measured(case, "select"):
        return None
    if metrics.failed_earlier(case, "select") is not None:
        return 0.0
    return float(bool(selection_correct(case)))


def _plan_hit(case: Mapping[str, Any]) -> float | None:
    if not metrics.measured(case, "plan"):
        return None
    plan = case.get("plan")
    return float(
        isinstance(plan, Mapping)
        and plan.get("status") == "synthesized"
        and not metrics.failed_at(case, "plan")
    )


def _execute_success(case: Mapping[str, Any]) -> float | None:
    return metrics.pass_ratio(case) if metrics.measured(case, "execute") else None


def _pass_rate(case: Mapping[str, Any]) -> float | None:
    return metrics.pass_ratio(case) if case.get("status") in ("passed", "failed", "error") else None


CASE_METRICS: dict[str, Callable[[Mapping[str, Any]], float | None]] = {
    "hit_at_k": _hit_at_k,
    "top_1": _top_1,
    "mrr": _mrr,
    "selector_accuracy": _selector_accuracy,
    "plan_hit_rate": _plan_hit,
    "execute_read_success_rate": _execute_success,
    "pass_rate": _pass_rate,
}

# The run-level names of the acceptance metrics, as the artifact spells them.
METRIC_ALIASES: dict[str, str] = {
    "search_hit_at_k": "hit_at_k",
    "hit_at": "hit_at_k",
    "search_top_1": "top_1",
    "target_selector_accuracy": "selector_accuracy",
    "plan_hit": "plan_hit_rate",
    "execute_success_rate": "execute_read_success_rate",
}


def case_metric(name: str) -> Callable[[Mapping[str, Any]], float | None] | None:
    """The per-case value function of metric ``name`` (None for a metric only suites report, e.g. ndcg)."""
    return CASE_METRICS.get(METRIC_ALIASES.get(name, name))

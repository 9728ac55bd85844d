"""Checks of a schema-valid qlab.yaml that a JSON Schema cannot express: names that must refer to something,
the order of the gates, thresholds that can never hold (an error) and gates that can never block (a warning).
Each finding is located at the value that is wrong."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from qlab.contracts.errors import Diagnostic
from qlab.contracts.metrics import METRICS
from qlab.project.document import Document, JsonPath
from qlab.project.messages import suggestion
from qlab.project.model import STAGE_MODES, STAGES, Config, Gate, host_allowed

# the stages a case of each mode goes through: a gate at a later stage never sees the case
MODE_REACH = {
    "search": ("build", "search", "learn"),
    "plan": ("build", "search", "select", "plan", "learn"),
    "execute": STAGES,
}


class _Checker:
    def __init__(self, config: Config, document: Document) -> None:
        self.config = config
        self.doc = document
        self.out: list[Diagnostic] = []

    def error(self, path: JsonPath, message: str, *, prefer_key: bool = False) -> None:
        self.out.append(self.doc.diagnostic(path, message, prefer_key=prefer_key))

    def warn(self, path: JsonPath, message: str) -> None:
        self.out.append(self.doc.diagnostic(path, message, severity="warning"))

    def reference(
        self, path: JsonPath, name: str | None, known: Iterable[str], noun: str, where: str
    ) -> None:
        """An error when ``name`` is not among ``known``, with a suggestion or the list of known names."""
        choices = list(known)
        if name is None or name in choices:
            return
        hint = suggestion(name, choices)
        if hint:
            tail = hint
        elif choices:
            tail = f" Known {noun}s: {', '.join(choices)}."
        else:
            tail = f" Define it under {where}."
        self.error(path, f"unknown {noun} {name!r}.{tail}")

    def suites(self) -> None:
        envs = self.config.environments
        for name, suite in self.config.suites.items():
            path: JsonPath = ("suites", name)
            self.reference((*path, "environment"), suite.environment, envs, "environment", "environments")
            if suite.mode == "execute" and suite.environment is None:
                defined = f" (defined: {', '.join(envs)})" if envs else " and define one under environments"
                self.error(path, f"execute suite {name!r} needs an environment: add `environment: <name>`{defined}",
                           prefer_key=True)  # fmt: skip
            if suite.min_pass > suite.repeat:
                self.error(
                    (*path, "min_pass"), f"min_pass {suite.min_pass} is more than repeat {suite.repeat}"
                )

    def auth(self) -> None:
        profiles = self.config.auth_profiles
        for name, env in self.config.environments.items():
            self.reference(
                ("environments", name, "auth"), env.auth, profiles, "auth profile", "auth_profiles"
            )
        self.reference(("collection", "auth"), self.config.collection.auth_profile, profiles, "auth profile",
                       "auth_profiles")  # fmt: skip

    def environments(self) -> None:
        """An environment that lists allowed_hosts lists its own base_url's host: qlab reads base_url before any
        case runs (the readiness probe) and in every case, so a list that leaves it out says one thing and does
        another. Without allowed_hosts an environment is read-only: its base_url is the one host it reads."""
        for name, env in self.config.environments.items():
            if not env.allowed_hosts or host_allowed(env.base_url, env.allowed_hosts):
                continue
            host = urlsplit(env.base_url).netloc.rpartition("@")[2] or env.base_url
            self.error(
                ("environments", name, "allowed_hosts"),
                f"base_url's host {host!r} is not in allowed_hosts ({', '.join(env.allowed_hosts)}), but qlab "
                f"sends it requests (the readiness probe, every case). Add {urlsplit(env.base_url).hostname or host!r} "
                "to allowed_hosts, or remove allowed_hosts to keep the environment read-only.",
            )

    def sources(self) -> None:
        seen: set[str] = set()
        for index, source in enumerate(self.config.collection.sources):
            if source.name in seen:
                self.error(("collection", "sources", index), f"two sources are named {source.name!r}: give each a "
                           "distinct name")  # fmt: skip
            seen.add(source.name)

    def gates(self) -> None:
        suites = self.config.suites
        names: set[str] = set()
        previous = None
        for index, gate in enumerate(self.config.gates):
            path: JsonPath = ("gates", index)
            if gate.name in names:
                self.error((*path, "name") if "name" in self.doc.data["gates"][index] else (*path, "stage"),
                           f"two gates are named {gate.name!r}: give each a distinct name")  # fmt: skip
            names.add(gate.name)
            for position, suite_name in enumerate(gate.suites):
                where = (*path, "suites", position)
                self.reference(where, suite_name, suites, "suite", "suites")
                suite = suites.get(suite_name)
                if suite is not None and gate.stage not in MODE_REACH[suite.mode]:
                    self.warn(where, f"suite {suite_name!r} runs in {suite.mode} mode: its cases never reach the "
                              f"{gate.stage} stage")  # fmt: skip
            self.threshold_bounds(path, gate)
            self.stop_bounds(path, gate)
            self.can_block(path, gate)
            if gate.include_manual and not any(
                suites[n].cadence == "manual" for n in gate.suites if n in suites
            ):
                self.warn((*path, "include_manual"), "include_manual: the gate names no cadence: manual suite, so "
                          "it changes nothing")  # fmt: skip
            if previous is not None and STAGES.index(gate.stage) < STAGES.index(previous.stage):
                self.error(
                    (*path, "stage"),
                    f"gate {gate.name!r} (stage {gate.stage}) comes after gate {previous.name!r} (stage "
                    f"{previous.stage}); gates run in stage order: {', '.join(STAGES)}",
                )
            previous = (
                gate
                if previous is None or STAGES.index(gate.stage) >= STAGES.index(previous.stage)
                else previous
            )

    def threshold_bounds(self, path: JsonPath, gate: Gate) -> None:
        """A threshold no value of its metric can meet (``hit_at_k: ">= 1.01"``, a negative latency) can never
        hold: an error where it is written. One every value meets outside the metric's range (``>= 95`` for 95 %
        the other way round, ``<= 95``) is a likely typo: a warning."""
        written = self.doc.data["gates"][path[1]].get("thresholds")
        for position, threshold in enumerate(gate.thresholds):
            info = METRICS.get(threshold.metric)
            if info is None:
                continue
            low, high = info.bounds
            value, op = threshold.value, threshold.op
            key: str | int = threshold.metric if isinstance(written, dict) else position
            where = (*path, "thresholds", key) if isinstance(written, dict | list) else (*path, "thresholds")
            what = "a share between 0 and 1" if info.unit == "share" else f"never negative ({info.unit})"
            never = {
                ">=": value > high,
                ">": value >= high,
                "<=": value < low,
                "<": value <= low,
                "==": not low <= value <= high,
            }.get(op, False)
            if never:
                hint = "; write 0.95 for 95 %" if info.unit == "share" and value >= 2 else ""
                self.error(where, f"'{op} {value:g}' can never hold: {threshold.metric} is {what}{hint}")
            elif not low <= value <= high:
                self.warn(where, f"{threshold.metric} is {what}, so '{op} {value:g}' compares it with a bound it "
                          f"never reaches and always holds{'; write 0.95 for 95 %' if info.unit == 'share' else ''}")  # fmt: skip

    def stop_bounds(self, path: JsonPath, gate: Gate) -> None:
        """``<metric>_below: X`` / ``_above: X`` outside the metric's range fires on every run (an error: the gate
        always blocks) or never (a warning)."""
        for position, stop in enumerate(gate.stop_if):
            if stop.value is None or not stop.name.endswith(("_below", "_above")):
                continue
            metric, side = stop.name.rsplit("_", 1)
            info = METRICS.get(metric)
            if info is None:
                continue
            low, high = info.bounds
            always = stop.value > high if side == "below" else stop.value < low
            never = stop.value <= low if side == "below" else stop.value >= high
            where = (*path, "stop_if", position, stop.name)
            if always:
                self.error(where, f"{stop.name}: {stop.value:g} fires on every run: {metric} is never "
                           f"{'above' if side == 'below' else 'below'} {high if side == 'below' else low:g}")  # fmt: skip
            elif never:
                self.warn(where, f"{stop.name}: {stop.value:g} can never fire: {metric} is never {side} it")

    def can_block(self, path: JsonPath, gate: Gate) -> None:
        """A gate that judges no required suite and states no threshold, stop condition or max_failures can never
        block: every run passes it, whatever happens (the learn gate's scrub check always runs)."""
        if gate.stage == "learn" or gate.thresholds or gate.stop_if or gate.max_failures is not None:
            return
        suites = self.config.suites
        if any(n not in suites for n in gate.suites):
            return  # an unknown suite is an error of its own
        effective = gate.suites or tuple(n for n, s in suites.items() if s.mode in STAGE_MODES[gate.stage])
        if any(suites[n].required for n in effective if n in suites):
            return
        why = (
            "it judges no case (the build stage has none)"
            if gate.stage == "build"
            else "it judges no required suite"
            if effective
            else "it judges no suite"
        )
        self.warn(path, f"gate {gate.name!r} can never block: {why} and states no thresholds, stop_if or "
                  "max_failures; add one, or remove the gate")  # fmt: skip

    def governance(self) -> None:
        suites = self.config.suites
        learning = self.config.learning
        self.reference(("learning", "regression_suite"), learning.regression_suite, suites, "suite", "suites")
        for name, skill in self.config.release.items():
            self.reference(
                ("release", name, "regression_suite"), skill.regression_suite, suites, "suite", "suites"
            )
        for name, rule in self.config.promotion.items():
            for index, suite_name in enumerate(rule.suites):
                self.reference(("promotion", name, "suites", index), suite_name, suites, "suite", "suites")


def check_config(config: Config, document: Document) -> list[Diagnostic]:
    """Every semantic finding of ``config`` (errors and warnings), located in its ``document``."""
    checker = _Checker(config, document)
    checker.suites()
    checker.auth()
    checker.environments()
    checker.sources()
    checker.gates()
    checker.governance()
    return checker.out

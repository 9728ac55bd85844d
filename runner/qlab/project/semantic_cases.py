"""Checks of schema-valid cases that a JSON Schema cannot express: the case's mode against its suite's,
JSONPaths and regular expressions that must compile, captures that cleanup steps refer to, mutation safety,
and, across files, the suites' critical ids (duplicate ids are found as the files are read: ``cases``).

Tool ids (``expected_target``, assertion tools) are *not* checked here: the collection is built later, by the
build stage, which reports unknown targets itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qlab.adapters import jsonpath
from qlab.contracts.errors import Diagnostic, InputError
from qlab.contracts.metrics import MODE_STAGES
from qlab.project.document import Document, JsonPath
from qlab.project.messages import suggestion
from qlab.project.model import Case, Config, Suite, assertion_stage

MODES = ("search", "plan", "execute")
_CAPTURE_REF = re.compile(r"\$\{captures\.([^}]*)\}")


def _strings(value: Any, path: JsonPath) -> Iterable[tuple[JsonPath, str]]:
    """Every string inside ``value`` with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


class CaseChecker:
    """Per-case checks; ``doc`` is the case file and ``at`` the case's path in it (``()`` or ``(i,)``)."""

    def __init__(self, doc: Document, at: JsonPath, data: Mapping[str, Any]) -> None:
        self.doc, self.at, self.data = doc, at, data
        self.out: list[Diagnostic] = []

    def error(self, rel: JsonPath, message: str) -> None:
        self.out.append(self.doc.diagnostic((*self.at, *rel), message))

    def warn(self, rel: JsonPath, message: str) -> None:
        self.out.append(self.doc.diagnostic((*self.at, *rel), message, severity="warning"))

    def jsonpath(self, rel: JsonPath, expression: str) -> None:
        try:
            jsonpath.compile_path(expression)
        except InputError as exc:
            self.error(rel, f"{exc}; write a JSONPath such as '$.data[0].id'")

    def regex(self, rel: JsonPath, expression: str) -> None:
        try:
            re.compile(expression)
        except re.error as exc:
            self.error(rel, f"invalid regular expression {expression!r}: {exc}")

    def items(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        """The mapping items of list ``key`` (a case that failed the schema may hold anything)."""
        value = self.data.get(key)
        return (
            [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]
            if isinstance(value, list)
            else []
        )

    def mode(self, suite: Suite) -> None:
        mode = self.data.get("mode")
        if suite.name and mode in MODES and mode != suite.mode:
            article = "an" if mode == "execute" else "a"
            self.error(("mode",), f"mode {mode!r} differs from the mode of suite {suite.name!r} ({suite.mode}): "
                       f"move the case to {article} {mode} suite, or remove `mode`")  # fmt: skip

    def assertions(self) -> None:
        for index, item in self.items("assertions"):
            at: JsonPath = ("assertions", index)
            path = item.get("path")
            if isinstance(path, str) and path.startswith("$"):  # other forms are the schema's to report
                self.jsonpath((*at, "path"), path)
            for key in ("regex", "pattern"):
                if item.get("type") == "json_path_matches" and isinstance(item.get(key), str):
                    self.regex((*at, key), item[key])
            bounds = item.get("range")
            if (
                isinstance(bounds, list)
                and len(bounds) == 2
                and all(isinstance(b, int) for b in bounds)
                and bounds[0] > bounds[1]
            ):
                self.error((*at, "range"), f"range [{bounds[0]}, {bounds[1]}] is empty: write [low, high]")
            low, high = item.get("min"), item.get("max")
            if (
                item.get("type") == "json_path_count"
                and isinstance(low, int)
                and isinstance(high, int)
                and low > high
            ):
                self.error((*at, "max"), f"max {high} is less than min {low}")

    def captures(self) -> None:
        names: list[str] = []
        for index, capture in self.items("captures"):
            name, path = capture.get("name"), capture.get("path")
            if isinstance(name, str):
                if name in names:
                    self.error(("captures", index, "name"), f"capture {name!r} is defined twice")
                names.append(name)
            if isinstance(path, str) and path.startswith("$"):
                self.jsonpath(("captures", index, "path"), path)
        for index, step in self.items("cleanup"):
            for rel, text in _strings(step, ("cleanup", index)):
                for match in _CAPTURE_REF.finditer(text):
                    name = match.group(1)
                    if name not in names:
                        listed = (
                            f" Captures of this case: {', '.join(names)}."
                            if names
                            else " Add it under `captures`."
                        )
                        hint = suggestion(name, names) or listed
                        self.error(rel, f"${{captures.{name}}} refers to no capture of this case.{hint}")

    def safety(self, case: Case, config: Config | None, suite: Suite) -> None:
        if case.mode != "execute" or case.mutation_safety != "allow_mutation":
            return
        missing = [word for word, present in (("cleanup steps", case.cleanup), ("assertions", case.assertions))
                   if not present]  # fmt: skip
        if missing:
            self.warn(("mutation_safety",), f"a mutating case without {' or '.join(missing)} is refused at run time "
                      "(cleanup_missing): add cleanup steps that undo it, and assertions")  # fmt: skip
        env = config.environments.get(suite.environment) if config and suite.environment else None
        if env is not None and not env.allowed_hosts:
            self.warn(("mutation_safety",), f"environment {env.name!r} has no allowed_hosts: mutating requests are "
                      "refused at run time (host_not_allowed)")  # fmt: skip

    def unchecked(self, case: Case) -> None:
        """Fields are additive: a case keeps the fields of a later stage than its mode reaches, and they are not
        checked there. Said so, rather than skipped in silence."""
        stages = MODE_STAGES.get(case.mode, ())
        later = "plan or execute" if case.mode == "search" else "execute"
        for index, assertion in enumerate(case.assertions):
            stage = assertion_stage(assertion.type)
            if stage not in stages:
                self.warn(("assertions", index), f"assertion {assertion.type} checks the {stage} stage, which a "
                          f"{case.mode} case does not reach: it is not checked; move the case to a {later} suite "
                          "to check it")  # fmt: skip
        if case.mode == "search" and case.expected_plan_tools:
            self.warn(("expected_plan_tools",), "expected_plan_tools is checked by the plan stage, which a search "
                      "case does not reach: it is not checked (and scores no coverage); move the case to a plan "
                      "suite to check it")  # fmt: skip

    def purpose(self, case: Case) -> None:
        if not (case.expected_target or case.assertions or case.expected_plan_tools):
            self.warn((), "the case checks nothing: add expected_target or assertions")


def check_case(
    case: Case | None,
    data: Mapping[str, Any],
    *,
    doc: Document,
    at: JsonPath,
    suite: Suite,
    config: Config | None,
) -> list[Diagnostic]:
    """Every finding of one case (errors and warnings). ``case`` is None when the case failed the schema: the
    checks that read the raw data still run, so one pass reports everything."""
    checker = CaseChecker(doc, at, data)
    checker.mode(suite)
    checker.assertions()
    checker.captures()
    if case is not None:
        checker.safety(case, config, suite)
        checker.unchecked(case)
        checker.purpose(case)
    return checker.out


def check_critical(config: Config, doc: Document, cases: Sequence[Case]) -> list[Diagnostic]:
    """Every id in a suite's ``critical`` list must be a case of that suite."""
    out = []
    for name, suite in config.suites.items():
        ids = [c.id for c in cases if c.suite == name] if suite.critical else []
        known = set(ids)
        for index, case_id in enumerate(suite.critical):
            if case_id not in known:
                hint = suggestion(case_id, ids)
                out.append(doc.diagnostic(("suites", name, "critical", index),
                                          f"{case_id!r} is not a case of suite {name!r}.{hint}"))  # fmt: skip
    return out

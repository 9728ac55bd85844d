"""JUnit XML from a result artifact, valid against both the Jenkins/xunit ``junit-10.xsd`` and the strict Ant
schema, and readable by junitparser, GitLab, dorny, mikepenz and EnricoMi. Written in pieces by the small
writer here with the standard library's escaping (not junit-xml: see the README).

Shape (flat ``testsuites`` > ``testsuite`` > ``testcase``, (classname, name) unique across the report):
``qlab`` holds the pre-run checks and the decision (passed for PASS, ``failure`` for BLOCK, ``error`` for
ERROR); ``gate.<name>`` each gate's verdict, thresholds, fired stops and guards; ``suite.<name>`` a testcase
per case.

``failure`` = breached, ``error`` = not evaluated, ``skipped`` = never run. A finding that does not gate is
still a ``failure`` (or ``error``), its message starting ``does not gate (why)``, named by the testsuite's
``qlab.non_gating`` property (docs/report.md). Metrics go in ``properties`` (no data: left out); times are
``%.3f``; per-case text is capped (``cap``)."""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple
from xml.sax.saxutils import escape

from qlab.contracts.reasons import hint
from qlab.contracts.results import json_or_text
from qlab.report import derive

MAX_CASE_TEXT = 64 * 1024
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """Text that XML 1.0 can carry and a reader can see: ANSI colour codes removed, then every character XML
    forbids written as visible ``#xNN`` (pytest's convention), never silently dropped."""
    text = str(value)
    if _ILLEGAL.search(text) is None:  # no ESC either: nothing to remove or replace
        return text
    text = _ANSI.sub("", text)
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def cap(text: str, limit: int = MAX_CASE_TEXT) -> str:
    """Head and tail of ``text`` with a ``[truncated N chars]`` marker in between when it is longer than
    ``limit`` characters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[truncated {len(text) - 2 * half} chars]\n{text[-half:]}"


def seconds(ms: Any) -> str:
    try:
        value = max(0.0, float(ms or 0.0)) / 1000.0
    except (TypeError, ValueError):
        value = 0.0
    return f"{value:.3f}"


def _attribute(value: Any) -> str:
    """An attribute value: XML's text, escaped as ElementTree escapes an attribute."""
    return escape(xml_text(value), _ATTRIBUTE_ENTITIES)


_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}  # beside & < >
CASE_LEVEL = 2  # testsuites > testsuite > testcase: the indentation level of every testcase


class _Testcase(NamedTuple):
    """One testcase: passed when it has no ``outcome`` (``failure``, ``error`` or ``skipped``); ``text`` (or the
    function that makes it, called when the report is written) follows the message in the child's text."""

    name: str
    classname: str
    ms: Any
    outcome: str | None = None
    kind: str = ""
    message: str = ""
    text: str | Callable[[], str] = ""

    def xml(self) -> str:
        head = (
            f'<testcase name="{_attribute(self.name)}" classname="{_attribute(self.classname)}" '
            f'time="{seconds(self.ms)}"'
        )
        if self.outcome is None:
            return head + " />"
        attrs = f'message="{_attribute(self.message)}"'
        if self.outcome != "skipped":  # the strict schema requires a type on failure/error
            attrs += f' type="{_attribute(self.kind or self.outcome)}"'
        more = self.text() if callable(self.text) else self.text
        body = escape(xml_text(cap(f"{self.message}\n{more}".strip() if more else self.message)))
        child = f"<{self.outcome} {attrs}>{body}</{self.outcome}>" if body else f"<{self.outcome} {attrs} />"
        # a testcase with one child, laid out as ElementTree's indent lays it out
        return f"{head}>\n{' ' * (CASE_LEVEL + 1)}{child}\n{' ' * CASE_LEVEL}</testcase>"


class _Suite:
    """One ``testsuite`` being filled; testcase names are made unique within the report."""

    def __init__(self, report: _Report, name: str, properties: Mapping[str, Any]) -> None:
        self.report = report
        self.name = name
        self.properties = properties
        self.testcases: list[_Testcase] = []
        self.non_gating: list[str] = []  # testcases that failed without gating (``qlab.non_gating``)

    def case(self, classname: str, name: str, *, ms: Any = 0.0, outcome: str | None = None, kind: str = "",
             message: str = "", text: str | Callable[[], str] = "", why_not_gating: str = "") -> None:  # fmt: skip
        """Add a testcase. A failure that ``why_not_gating`` explains is written as one, and named in
        ``qlab.non_gating``."""
        unique = xml_text(self.report.unique(classname, name))
        if why_not_gating and outcome in ("failure", "error"):
            message = f"does not gate ({why_not_gating}): {message}"
            self.non_gating.append(unique)
        self.testcases.append(_Testcase(unique, classname, ms, outcome, kind, message, text))

    def attributes(self, index: int, timestamp: str, hostname: str) -> str:
        outcomes = Counter(case.outcome for case in self.testcases)
        attrs = {
            "package": "qlab",
            "id": index,
            "name": self.name,
            "timestamp": timestamp,
            "hostname": hostname,
            "tests": len(self.testcases),
            "failures": outcomes["failure"],
            "errors": outcomes["error"],
            "skipped": outcomes["skipped"],
            "time": seconds(sum(float(case.ms or 0.0) for case in self.testcases)),
        }
        return " ".join(f'{key}="{_attribute(value)}"' for key, value in attrs.items())


def _record_time(case: Mapping[str, Any]) -> float:
    """A case record's testcase time in ms: its stage latencies added up."""
    return sum(float(v) for v in (case.get("latency_ms") or {}).values())


class _Report:
    def __init__(self, artifact: Mapping[str, Any]) -> None:
        self.suites: list[_Suite] = []
        self.seen: dict[str, set[str]] = {}  # classname -> its testcase names
        self.timestamp = _timestamp(str(artifact.get("started_at", "")))

    def suite(self, name: str, properties: Mapping[str, Any]) -> _Suite:
        made = _Suite(self, name, properties)
        self.suites.append(made)
        return made

    def unique(self, classname: str, name: str) -> str:
        seen = self.seen.setdefault(classname, set())
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name} #{n}"
        seen.add(candidate)
        return candidate

    def xml(self, hostname: str) -> Iterator[str]:
        """The report's XML in pieces, one testcase a piece (a large report is never one string), indented by one
        space a level as ElementTree's ``indent`` lays it out."""
        yield '<?xml version="1.0" encoding="UTF-8"?>\n'
        if not self.suites:
            yield "<testsuites />\n"  # the strict schema allows no attribute here
            return
        yield "<testsuites>"
        between = "\n" + " " * CASE_LEVEL  # the indentation of every child of a testsuite
        for index, suite in enumerate(self.suites):
            yield f"\n <testsuite {suite.attributes(index, self.timestamp, hostname)}>"
            properties = dict(suite.properties)
            if suite.non_gating:
                properties["qlab.non_gating"] = ", ".join(suite.non_gating)
            rows = [
                f'\n   <property name="{_attribute(key)}" value="{_attribute(_value(value))}" />'
                for key, value in properties.items()
                if value is not None  # no data: left out (a "null" string would read as a value)
            ]
            yield between + (
                "<properties>" + "".join(rows) + between + "</properties>" if rows else "<properties />"
            )
            for case in suite.testcases:
                yield between + case.xml()
            yield between + "<system-out />" + between + "<system-err />\n </testsuite>"
        yield "\n</testsuites>\n"


def _timestamp(iso: str) -> str:
    """The strict schema's timestamp: ``YYYY-MM-DDTHH:MM:SS``, no zone, no fraction (UTC here)."""
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).strftime("%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return "1970-01-01T00:00:00"


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _flat(prefix: str, data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flat(f"{prefix}{key}.", value))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _figures(prefix: str, data: Mapping[str, Any], unreached: frozenset[str]) -> dict[str, Any]:
    """``_flat`` figures, with those whose stage was never reached written ``n/a (not reached)`` (a figure with no
    data is left out)."""
    out = _flat(prefix, data)
    out.update({f"{prefix}{name}": derive.NOT_REACHED for name in unreached if data.get(name) is None})
    return out


def _run_suite(report: _Report, artifact: Mapping[str, Any]) -> None:
    fp = artifact.get("fingerprint") or {}
    props: dict[str, Any] = {
        "qlab.version": artifact.get("qlab_version"),
        "qlab.run_id": artifact.get("run_id"),
        "qlab.project": artifact.get("project"),
        "qlab.fingerprint": fp.get("digest"),
        "qlab.config_digest": fp.get("config_digest"),
        "qlab.collection_digest": fp.get("collection_digest"),
        "qlab.git_commit": fp.get("git_commit"),
    }
    shard = derive.shard_label(artifact)
    if shard:
        props["qlab.shard"] = shard
    props.update(_figures("metric.", artifact.get("metrics") or {}, derive.not_reached(artifact)))
    props.update(
        _figures("scorecard.", artifact.get("scorecard") or {}, derive.not_reached(artifact, "scorecard"))
    )
    suite = report.suite("qlab", props)
    for guard in artifact.get("prerun") or ():
        _guard_case(suite, "qlab.prerun", guard, failed_outcome="error")
    decision = artifact.get("decision") or {}
    reasons = "\n".join(str(r) for r in decision.get("reasons") or ())
    verdict = derive.verdict(decision)
    if verdict in ("error", "cancelled"):  # nothing was decided either way
        suite.case("qlab", "decision", outcome="error", message=f"{verdict.upper()}: {reasons}")
    elif verdict == "block":
        suite.case("qlab", "decision", outcome="failure", kind="blocked", message=f"BLOCK: {reasons}")
    else:
        suite.case("qlab", "decision", ms=artifact.get("duration_ms"))


def _guard_case(
    suite: _Suite, classname: str, guard: Mapping[str, Any], *, failed_outcome: str = "failure"
) -> None:
    name = derive.check_name(guard)  # with its subject: one gate may run a check more than once
    message = str(guard.get("message", ""))
    if guard.get("passed"):
        suite.case(classname, name)
    elif guard.get("mode") == "warn":
        kind = str(guard.get("guard"))
        suite.case(
            classname, name, outcome="failure", kind=kind, message=message, why_not_gating="warn-mode check"
        )
    else:
        suite.case(classname, name, outcome=failed_outcome, kind=str(guard.get("guard")), message=message)


def _gate_suite(report: _Report, gate: Mapping[str, Any], stages: Mapping[str, Any]) -> None:
    name = str(gate.get("name"))
    props: dict[str, Any] = {"gate.stage": gate.get("stage"), "gate.status": gate.get("status")}
    for row in gate.get("thresholds") or ():
        where = f"[{row['suite']}]" if row.get("suite") else ""
        props[f"threshold.{row.get('metric')}{where}"] = (
            derive.NOT_REACHED if row.get("not_reached") else row.get("actual")
        )
    suite = report.suite(f"gate.{name}", props)
    classname = f"qlab.gate.{name}"
    status = gate.get("status")
    reasons = "\n".join(str(r) for r in gate.get("reasons") or ())
    ms = (stages.get(str(gate.get("stage"))) or {}).get("duration_ms", 0.0)
    if status == "blocked":
        suite.case(classname, "verdict", ms=ms, outcome="failure", kind="gate_blocked", message=reasons)
    elif status == "error":
        suite.case(classname, "verdict", ms=ms, outcome="error", kind="gate_error", message=reasons)
    elif status == "skipped":
        suite.case(classname, "verdict", outcome="skipped", message=reasons or "skipped")
    else:
        suite.case(classname, "verdict", ms=ms)
    for row in gate.get("thresholds") or ():
        label = f"{row.get('metric')} {row.get('op')} {row.get('value')}" + (
            f" [{row['suite']}]" if row.get("suite") else ""
        )
        if row.get("passed") is None:
            said = derive.NOT_REACHED if row.get("not_reached") else "no data"
            suite.case(classname, label, outcome="skipped", message=f"not evaluated: {said}")
        elif row.get("passed"):
            suite.case(classname, label)
        else:
            text = f"{row.get('metric')} = {row.get('actual')} breaches {row.get('op')} {row.get('value')}"
            why = "" if row.get("gating", True) else _threshold_why(gate, row)
            suite.case(
                classname, label, outcome="failure", kind="threshold", message=text, why_not_gating=why
            )
    for stop in gate.get("stops") or ():
        label = f"stop_if {stop.get('condition')}"
        text = f"{stop.get('message', '')} cases: {', '.join(stop.get('case_ids') or ()) or '-'}"
        why = "" if stop.get("gating", True) else "only non-gating cases fired it"
        kind = str(stop.get("condition"))
        suite.case(classname, label, outcome="failure", kind=kind, message=text, why_not_gating=why)
    for guard in gate.get("guards") or ():
        _guard_case(suite, classname, guard)


def _threshold_why(gate: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """Why a breached threshold does not gate: its suite is not required, or a shard leaves it to the merge."""
    if any("deferred" in str(r) for r in gate.get("warnings") or ()):
        return "deferred: qlab merge judges it on all shards"
    return "suite is required: false" if row.get("suite") else "not gating"


def _case_text(case: Mapping[str, Any]) -> str:
    failure = case.get("failure") or {}
    lines = [f"name: {case['name']}"] if case.get("name") else []
    tip = hint(str(failure.get("reason", "")))
    if tip:
        lines.append(f"hint: {tip}")
    for item in case.get("assertions") or ():
        if not item.get("passed"):
            lines.append(f"assertion {item.get('type')}: {item.get('message', '')}")
    if case.get("file"):
        lines.append(f"at {case['file']}:{case.get('line', 0)}")
    stage_key = {"select": "target_selector"}.get(str(failure.get("stage")), str(failure.get("stage")))
    if isinstance(case.get(stage_key), Mapping):
        lines.append(f"{stage_key}: {_object_text(case[stage_key])}")
    return "\n".join(lines)


def _object_text(obj: Mapping[str, Any]) -> str:
    """A stage object as sorted JSON: its search rows as their JSON objects, a value JSON has no type for (a path,
    a date) as its text (never a crash while writing the report)."""
    return json.dumps(obj, sort_keys=True, default=json_or_text)


def _case_suites(report: _Report, artifact: Mapping[str, Any]) -> None:
    by_suite: dict[str, list[Mapping[str, Any]]] = {}
    for case in artifact.get("cases") or ():
        by_suite.setdefault(str(case.get("suite")), []).append(case)
    suites = artifact.get("suites") or {}
    why_not = derive.not_gating(artifact)
    for name in [*suites, *(s for s in by_suite if s not in suites)]:
        info = suites.get(name) or {}
        props = {
            "suite.mode": info.get("mode"),
            "suite.category": info.get("category"),
            "suite.required": info.get("required"),
        }
        props.update(
            _figures("metric.", info.get("metrics") or {}, derive.not_reached(artifact, suite=str(name)))
        )
        shaky = [c for c in by_suite.get(name, ()) if c.get("status") == "passed" and derive.unstable(c)]
        if (
            shaky
        ):  # passed, but not on every repeat: flaky (a testcase has no place for it in the strict schema)
            props["suite.flaky_passed"] = ", ".join(
                f"{c.get('case_id')} {c.get('passes')}/{c.get('attempts')}" for c in shaky
            )
        suite = report.suite(f"suite.{name}", props)
        for case in by_suite.get(name, ()):
            _case(suite, f"qlab.{name}", case, why_not=why_not)


def _case(
    suite: _Suite, classname: str, case: Mapping[str, Any], *, why_not: Callable[[Mapping[str, Any]], str]
) -> None:
    status = case.get("status")
    ms = _record_time(case)
    failure = case.get("failure") or {}
    reason = str(failure.get("reason", status))
    message = f"{failure.get('stage', '?')}: {reason}: {failure.get('message', '')}".rstrip(": ")
    name = str(case.get("case_id"))
    if status == "passed":
        suite.case(classname, name, ms=ms)
    elif status in ("blocked", "skipped"):
        suite.case(classname, name, ms=ms, outcome="skipped", message=f"{status}: {message}")
    else:
        why = why_not(case)
        suite.case(
            classname,
            name,
            ms=ms,
            outcome="error" if status == "error" else "failure",
            kind=reason,
            message=message,
            text=partial(_case_text, case),
            why_not_gating=why,
        )


def render(artifact: Mapping[str, Any], *, hostname: str | None = None) -> str:
    """The JUnit XML of ``artifact`` (a result artifact dict)."""
    return "".join(chunks(artifact, hostname=hostname))


def chunks(artifact: Mapping[str, Any], *, hostname: str | None = None) -> Iterator[str]:
    """``render``'s XML in pieces, for writing a large report without holding it as one string."""
    report = _Report(artifact)
    _run_suite(report, artifact)
    stages = artifact.get("stages") or {}
    for gate in artifact.get("gates") or ():
        _gate_suite(report, gate, stages)
    _case_suites(report, artifact)
    return report.xml(hostname or _hostname())


def _hostname() -> str:
    try:
        return socket.gethostname() or "localhost"
    except OSError:
        return "localhost"

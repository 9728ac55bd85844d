"""GitHub Actions integration: annotations (workflow commands), ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY``.

- Annotations point at the case's line in its case file (``file`` relative to ``$GITHUB_WORKSPACE`` through
  ``root``, so they land on the pull request's file also when qlab.yaml sits in a subfolder), are emitted only
  when ``GITHUB_ACTIONS=true`` and escaped as actions/toolkit escapes them. Configuration errors (exit 2) are
  annotated too (``config_annotations``). At most ``MAX_PER_LEVEL`` per level, as GitHub shows, and one notice
  counts the rest.
- Raw downstream text is printed between ``stop_commands`` lines with a random token: a second fence, as the
  console makes every workflow command in outside text inert anyway (``qlab.adapters.scrub.neutralize_commands``).
- ``$GITHUB_OUTPUT`` gets the decision, the counts and the artifact paths (heredoc form for multi-line values)."""

from __future__ import annotations

import os
import posixpath
import secrets
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qlab.contracts.reasons import hint
from qlab.report import derive

MAX_PER_LEVEL = 10


def escape_data(text: str) -> str:
    """actions/toolkit ``escapeData``: the message of a command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """actions/toolkit ``escapeProperty``: a property value (file, line, title)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: Any) -> str:
    """One workflow command line, e.g. ``::error file=a.yaml,line=3,title=t::msg``."""
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v not in (None, ""))
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def in_actions(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("GITHUB_ACTIONS") == "true"


def _case_findings(
    artifact: Mapping[str, Any], root: str = ""
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The failing cases: ``error`` for those that gate, ``warning`` for those that do not (flaky and draft cases,
    ``required: false`` suites, failures their gate tolerated), their message starting ``does not gate (why)``."""
    why_not = derive.not_gating(artifact)
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {"error": [], "warning": []}
    for case in artifact.get("cases") or ():
        if case.get("status") not in ("failed", "error"):
            continue
        failure = case.get("failure") or {}
        reason = str(failure.get("reason", ""))
        text = f"{case.get('case_id')}: {failure.get('stage')}: {reason}: {failure.get('message', '')}"
        tip = hint(reason)
        message = f"{text}\nhint: {tip}" if tip else text
        why = why_not(case)
        props: dict[str, Any] = {"title": f"qlab {case.get('suite')}/{case.get('case_id')}"}
        if case.get("file"):
            props = {"file": _joined(root, str(case["file"])), "line": case.get("line") or 1, **props}
        if why:
            out["warning"].append((f"does not gate ({why}): {message}", props))
        else:
            out["error"].append((message, props))
    return out


def _findings(artifact: Mapping[str, Any], root: str = "") -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """level -> [(message, properties)], most important first. ``root`` is prefixed to each case file (the run's
    repository root relative to the workspace)."""
    out = _case_findings(artifact, root)
    out["notice"] = []
    for gate in artifact.get("gates") or ():
        if gate.get("status") in ("blocked", "error"):
            what = "could not decide" if gate.get("status") == "error" else "blocked"
            out["error"].insert(
                0,
                (
                    f"gate {gate.get('name')} {what}: " + "; ".join(gate.get("reasons") or ()),
                    {"title": "qlab gate"},
                ),
            )
        elif gate.get("status") == "warned":
            out["notice"].append(
                (
                    f"gate {gate.get('name')} warned: " + "; ".join(gate.get("reasons") or ()),
                    {"title": "qlab gate"},
                )
            )
    for guard in artifact.get("guards") or ():
        if not guard.get("passed") and guard.get("mode") == "warn":
            out["warning"].append(
                (
                    f"{derive.check_name(guard)}: {guard.get('message')}",
                    {"title": "qlab check"},
                )
            )
    return out


def _joined(root: str, file: str) -> str:
    return posixpath.normpath(posixpath.join(root, file)) if root else file


def annotation_lines(artifact: Mapping[str, Any], *, limit: int = MAX_PER_LEVEL, root: str = "") -> list[str]:
    """The workflow-command lines for ``artifact``: at most ``limit`` per level, plus one notice counting the
    rest (notices themselves keep one slot for it). ``root``: see ``_findings``."""
    return _capped(_findings(artifact, root), limit)


def _capped(found: Mapping[str, list[tuple[str, dict[str, Any]]]], limit: int) -> list[str]:
    lines: list[str] = []
    hidden = 0
    for level in ("error", "warning"):
        items = found[level]
        lines += [command(level, m, **p) for m, p in items[:limit]]
        hidden += max(0, len(items) - limit)
    notices = found["notice"]
    room = limit - 1 if hidden or len(notices) > limit else limit
    lines += [command("notice", m, **p) for m, p in notices[:room]]
    hidden += max(0, len(notices) - room)
    if hidden:
        lines.append(
            command(
                "notice",
                f"{hidden} more qlab finding(s) not annotated (GitHub shows 10 per level); see the job summary and the JUnit report",
                title="qlab",
            )
        )
    return lines


def config_annotations(
    diagnostics: Iterable[tuple[str, int, int, str, str]],
    *,
    workspace: Path,
    cwd: Path,
    limit: int = MAX_PER_LEVEL,
) -> list[str]:
    """``::error file=…,line=…,col=…::`` lines for located problems of the configuration (``(file, line, col,
    severity, message)``; ``file`` as the message shows it, relative to ``cwd`` or absolute). A file outside
    the workspace is annotated without a location (GitHub could not show it on a file anyway)."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {"error": [], "warning": [], "notice": []}
    for file, line, col, severity, message in diagnostics:
        props: dict[str, Any] = {"title": "qlab configuration"}
        where = workspace_path(cwd / file, workspace) if file else None
        if where is not None:
            props = {"file": where, **({"line": line, "col": col} if line > 0 else {}), **props}
        found["warning" if severity == "warning" else "error"].append((message, props))
    return _capped(found, limit)


def workspace_path(path: Path, workspace: Path) -> str | None:
    """``path`` relative to ``workspace`` in POSIX form, or None when it lies outside."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(workspace)))
    except ValueError:
        return None
    return rel.as_posix()


def run_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The page of this workflow run (``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID``), where
    its uploaded artifacts are listed; None outside Actions."""
    env = os.environ if environ is None else environ
    parts = [
        env.get(name, "").rstrip("/") for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    ]
    if not all(parts):
        return None
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}"


def stop_commands(*, token: str | None = None) -> tuple[str, str]:
    """The two command lines to print around raw text, ``::stop-commands::<token>`` and ``::<token>::``, so
    GitHub runs no command in between (the token is random: the text cannot end the fence)."""
    marker = token or secrets.token_hex(16)
    return f"::stop-commands::{marker}", f"::{marker}::"


def _output_lines(name: str, value: str) -> str:
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    while delimiter in value:  # the toolkit refuses a value that contains its delimiter
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def outputs(artifact: Mapping[str, Any], paths: Mapping[str, Path | str]) -> dict[str, str]:
    """The step outputs, named as action.yml and docs/github-actions.md document them: decision, exit code,
    case counts (``total``, ``passed``, ``failed``, ``errors``, ``blocked``, ``skipped``), reasons, and the
    paths of the files (``result``, ``junit``, ``summary``)."""
    decision = artifact.get("decision") or {}
    counts = {"total": 0, "passed": 0, "failed": 0, "errors": 0, "blocked": 0, "skipped": 0}
    for case in artifact.get("cases") or ():
        counts["total"] += 1
        status = str(case.get("status"))
        name = "errors" if status == "error" else status
        counts[name] = counts.get(name, 0) + 1
    out = {"decision": derive.verdict(decision), "exit-code": str(decision.get("exit_code", ""))}
    out.update({k: str(v) for k, v in counts.items()})
    out["reasons"] = "\n".join(str(r) for r in decision.get("reasons") or ())
    out.update({name: str(path) for name, path in paths.items()})
    return out


def write_outputs(values: Mapping[str, str], environ: Mapping[str, str] | None = None) -> Path | None:
    """Append ``values`` to ``$GITHUB_OUTPUT`` when it is set; returns the file written, if any."""
    env = os.environ if environ is None else environ
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return None
    with open(target, "a", encoding="utf-8", newline="\n") as handle:
        for name, value in values.items():
            handle.write(_output_lines(name, value))
    return Path(target)


def append_summary(text: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when it is set (skipped silently otherwise)."""
    env = os.environ if environ is None else environ
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    return Path(target)


def plain_lines(artifact: Mapping[str, Any], *, root: str = "") -> Sequence[str]:
    """Outside Actions: the same findings as readable ``path:line: level: message`` lines."""
    lines = []
    for level, items in _findings(artifact, root).items():
        for message, props in items:
            where = f"{props['file']}:{props['line']}: " if props.get("file") else ""
            lines.append(f"{where}{level}: {message.splitlines()[0]}")
    return lines

"""``qlab merge``: shard results → one result, judged again from the merged cases.

Only a complete, consistent set is accepted (``check_set``; else InputError, exit 2 — never a pass on partial
data): every shard 1..N exactly once, the same selection fingerprint, config (``shard.config_digest``) and
collection, no case in two shards, each shard's cases those of its recorded manifest (``shard.cases``), and all
together the selection the fingerprint was made from. The decision is recomputed from the merged cases and the
shards' recorded evidence (``qlab.run.evidence``), not from their exit codes, so merging any number of shards
gives the unsharded run's decision, metrics, cases and JUnit testcases."""

from __future__ import annotations

import glob
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from qlab.contracts import metrics
from qlab.contracts.errors import InputError
from qlab.contracts.metrics import CASE_STAGES, MODE_STAGES
from qlab.run import artifact, evidence, gates
from qlab.run.shard import case_manifest, selection_fingerprint

SHARD_GLOB = "qlab-shard-*-of-*.json"


def collect(inputs: Sequence[str]) -> list[Path]:
    """Files from ``inputs``: a file as given, a folder's ``qlab-shard-*-of-*.json``, or a glob pattern."""
    found: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found += sorted(path.glob(SHARD_GLOB))
        elif path.is_file():
            found.append(path)
        elif any(ch in item for ch in "*?["):
            found += sorted(Path(p) for p in glob.glob(item, recursive=True))
        else:
            raise InputError(f"{item}: no such file or folder")
    if not found:
        raise InputError(f"no shard results found in {', '.join(inputs)} (looked for {SHARD_GLOB})")
    return list(dict.fromkeys(found))


def check_set(shards: Sequence[tuple[Path, Mapping[str, Any]]]) -> int:
    """Raise InputError unless the shards form one complete set; returns N."""
    totals = {}
    by_index: dict[int, list[Path]] = {}
    for path, data in shards:
        shard = data.get("shard")
        if (
            not isinstance(shard, Mapping)
            or not isinstance(shard.get("index"), int)
            or not isinstance(shard.get("total"), int)
        ):
            raise InputError(f"{path}: $.shard: not a shard result (run it with qlab run --shard i/N)")
        totals[path] = int(shard["total"])
        by_index.setdefault(int(shard["index"]), []).append(path)
    total_values = set(totals.values())
    if len(total_values) != 1:
        detail = ", ".join(f"{p.name}: N={n}" for p, n in totals.items())
        raise InputError(f"the shards disagree on the number of shards: {detail}")
    total = total_values.pop()
    twice = {i: ps for i, ps in by_index.items() if len(ps) > 1}
    if twice:
        i, ps = sorted(twice.items())[0]
        raise InputError(f"shard {i}/{total} given more than once: {', '.join(str(p) for p in ps)}")
    missing = [i for i in range(1, total + 1) if i not in by_index]
    extra = [i for i in by_index if not 1 <= i <= total]
    if missing or extra:
        parts = [f"missing shard(s) {', '.join(f'{i}/{total}' for i in missing)}"] if missing else []
        parts += [f"out of range: {', '.join(f'{i}/{total}' for i in sorted(extra))}"] if extra else []
        raise InputError(
            f"incomplete shard set: {'; '.join(parts)}; merge needs every shard 1..{total} exactly once"
        )
    # the config as the shards share it: environments may listen elsewhere on each runner (``shard.config_digest``)
    config_key = (
        ("shard", "config_digest")
        if all("config_digest" in (d.get("shard") or {}) for _, d in shards)
        else ("fingerprint", "config_digest")
    )
    for key, label in (
        (("shard", "selection_fingerprint"), "selection fingerprint (selected cases, config, commit)"),
        (config_key, "config digest"),
        (("fingerprint", "collection_digest"), "collection digest"),
    ):
        values = {(d.get(key[0]) or {}).get(key[1]) for _, d in shards}
        if key[1] == "collection_digest":
            values.discard(
                None
            )  # a shard whose collection could not be built has none (its build gate says why)
            values = values or {None}
        if len(values) != 1:
            raise InputError(
                f"the shards come from different runs: their {label} differs; re-run the whole matrix"
            )
    seen: dict[str, Path] = {}
    for path, data in shards:
        for case in data["cases"]:
            other = seen.setdefault(str(case["case_id"]), path)
            if other != path:
                raise InputError(f"case {case['case_id']!r} is in two shards: {other} and {path}")
    for path, data in shards:
        _check_manifest(path, data)
    first = shards[0][1]
    fp = first.get("fingerprint") or {}
    digest = first["shard"].get("config_digest") or fp.get("config_digest")
    union = selection_fingerprint(list(seen), config_digest=str(digest), commit=fp.get("git_commit"))
    if union != first["shard"].get("selection_fingerprint"):
        raise InputError(
            f"the shards' cases together ({len(seen)}) are not the selection they were run from (its "
            "fingerprint differs): a case was removed from or added to a shard file; re-run the whole matrix"
        )
    return total


def _check_manifest(path: Path, data: Mapping[str, Any]) -> None:
    """The shard's cases are the ones it recorded running (``$.shard.cases``)."""
    manifest = data["shard"].get("cases")
    if not isinstance(manifest, Mapping) or not {"count", "digest"} <= set(manifest):
        raise InputError(
            f"{path}: $.shard.cases: no record of the cases this shard ran (a result of an older qlab?); "
            "re-run the shard with this qlab"
        )
    found = case_manifest(str(c.get("case_id")) for c in data["cases"])
    if found != {"count": manifest["count"], "digest": manifest["digest"]}:
        raise InputError(
            f"{path}: its cases do not match the ones it ran ($.shard.cases: {manifest['count']} case(s); the "
            f"file holds {found['count']}, other ids): cases were removed or added after the run; re-run the shard"
        )


def judge(
    shards: Sequence[Mapping[str, Any]],
    cases: list[dict[str, Any]],
    stages: Mapping[str, Any],
    *,
    prerun_failed: Mapping[str, Any] | None = None,
    defer: bool = False,
) -> list[dict[str, Any]]:
    """Every gate judged again on the merged evidence (the shards' gate records and stages, ``cases`` their
    cases, changed in place), in order, blocking later cases as a single run would. ``prerun_failed``: a
    block-mode pre-run check that failed in a shard: as in one run, no gate after the build judges, and no case
    ran (the run is ERROR). ``defer``: judge one shard of several as it judged itself (thresholds left to the
    merge). ``qlab.run.verify`` judges a stored result with it too."""
    first = shards[0]
    rules = gates.suite_rules(first.get("suites") or {})
    records: list[dict[str, Any]] = []
    blocked: tuple[int, str, str, bool] | None = (
        None  # (index, stage, name, could not decide) of the stopping gate
    )
    specs = [gates.GateSpec.from_record(g) for g in first["gates"]]
    for index, spec in enumerate(specs):
        mine = [d["gates"][index] for d in shards]
        # the learn gate observes a blocked run as a single run's does (not one stopped by an error)
        observes = spec.stage == "learn" and blocked is not None and not blocked[3]
        if (blocked is not None and not observes) or (prerun_failed is not None and spec.stage != "build"):
            stopped = gates.stopped_gate_text(
                blocked[2] if blocked else None, error=bool(blocked and blocked[3])
            )
            records.append(gates.skipped(spec, stopped, stopped=True))
            continue
        if all(g.get("status") == "skipped" for g in mine):
            records.append(dict(mine[0]))
            continue
        failed = next((g for g in mine if spec.stage == "build" and g.get("status") == "error"), None)
        if (
            failed is not None
        ):  # a shard could not build the collection (a spec URL down): it could not decide
            records.append(dict(failed))
            blocked = (index, spec.stage, spec.name, True)
            continue
        members = [c for c in cases if c["suite"] in spec.suites]
        suite_metrics = {
            s: metrics.case_metrics([c for c in members if c["suite"] == s])
            for s in spec.suites
            if any(c["suite"] == s for c in members)
        }
        stage = stages.get(spec.stage) or {}
        guards = evidence.guards(shards, [r.get("guards") or () for r in mine])
        record = gates.evaluate(
            spec,
            cases=members,
            suite_metrics=suite_metrics,
            stage_metrics=evidence.stage_metrics(stage.get("shard_metrics") or [], members),
            rules=rules,
            earlier=[specs[i] for i, r in enumerate(records) if r.get("status") != "skipped"],
            reported_stops=stage.get("stops") or (),
            guards=guards,
            defer_thresholds=defer,
        )
        if spec.stage == "build" and any(g.get("status") == "blocked" for g in mine):
            record["status"] = "blocked"
            record["reasons"] = list(dict.fromkeys(r for g in mine for r in g.get("reasons") or ()))
        records.append(record)
        if blocked is None and record["status"] in (
            "blocked",
            "error",
        ):  # the first stop: the learn gate after it
            blocked = (index, spec.stage, spec.name, record["status"] == "error")
    if prerun_failed is not None:
        message = gates.never_ran_text(prerun_failed)
        for case in cases:
            if (case.get("failure") or {}).get("stage") != "run":
                gates.roll_back(case, blocking_stage="run", gate="", error=True, keep=())
                case["failure"]["message"] = message
    elif blocked is not None:
        _roll_back(cases, specs, blocked)
    return records


def _roll_back(
    cases: list[dict[str, Any]], specs: Sequence[gates.GateSpec], blocked: tuple[int, str, str, bool]
) -> None:
    index, stage, name, error = blocked
    for case in cases:
        mine = [i for i, s in enumerate(specs) if case["suite"] in s.suites]
        if stage != "build" and (not mine or max(mine) <= index):
            continue
        failure = case.get("failure") or {}
        where = next((i for i in mine if specs[i].stage == failure.get("stage")), None)
        if failure.get("stage") == "build" or (
            where is not None and where <= index and failure.get("reason") != "blocked_by_stage"
        ):
            continue
        if (
            failure.get("reason") in ("blocked_by_stage", "stopped_by_error")
            and failure.get("stage") == stage
        ):
            continue
        gates.roll_back(
            case,
            blocking_stage=stage,
            gate=name,
            error=error,
            keep=_went_through(case, specs[: index + 1]),
        )


def _went_through(case: Mapping[str, Any], specs: Sequence[gates.GateSpec]) -> set[str]:
    """The case stages the case went through in ``specs`` (the gates before the run stopped, that one included):
    a plan case of a select gate went through search and select. Their objects are all it keeps once blocked."""
    kept: set[str] = set()
    for spec in specs:
        if case["suite"] in spec.suites and spec.stage in CASE_STAGES:
            kept.update(CASE_STAGES[: CASE_STAGES.index(spec.stage) + 1])
    return kept & set(MODE_STAGES.get(str(case.get("mode")), ()))


def merge(shards: Sequence[tuple[Path, Mapping[str, Any]]], *, exit_zero: bool = False) -> dict[str, Any]:
    """The merged result artifact of a complete shard set (see the module docstring)."""
    total = check_set(shards)
    ordered = sorted(shards, key=lambda item: int(item[1]["shard"]["index"]))
    datas = [d for _, d in ordered]
    first = datas[0]
    suite_order = {name: i for i, name in enumerate(first.get("suites") or {})}
    cases = sorted((dict(c) for d in datas for c in d["cases"]), key=artifact.case_sort_key(suite_order))
    stages = evidence.stages(datas)
    started = min(str(d.get("started_at", "")) for d in datas)
    ended = max(str(d.get("ended_at", "")) for d in datas)
    provenance = dict(first.get("provenance") or {})
    files: dict[str, dict[str, Any]] = {}
    for d in datas:
        for f in ((d.get("provenance") or {}).get("dataset") or {}).get("files") or ():
            entry = files.setdefault(f["path"], {**f, "cases": 0})
            entry["cases"] += int(f.get("cases", 0))
    if files:
        provenance["dataset"] = {
            **(provenance.get("dataset") or {}),
            "files": sorted(files.values(), key=lambda f: f["path"]),
        }
    provenance["run_configuration"] = {
        **(provenance.get("run_configuration") or {}),
        "shard": f"merged 1..{total}",
    }
    merged: dict[str, Any] = {
        "schema_version": artifact.SCHEMA_VERSION,
        "run_id": f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-merged-{total}",
        "started_at": started,
        "ended_at": ended,
        "duration_ms": _span_ms(started, ended, datas),
        "qlab_version": first.get("qlab_version"),
        "project": first.get("project"),
        "fingerprint": first.get("fingerprint"),
        "provenance": provenance,
        "shard": {
            "index": 1,
            "total": 1,
            "selection_fingerprint": first["shard"]["selection_fingerprint"],
            "merged_from": [str(p) for p, _ in ordered],
            "differed": evidence.differed(datas),
        },
        "warnings": list(dict.fromkeys(w for d in datas for w in d.get("warnings") or ())),
        "cases": cases,
        "suites": {
            name: {k: s.get(k) for k in artifact.SUITE_KEYS}
            for name, s in (first.get("suites") or {}).items()
        },
        "skipped_suites": list(first.get("skipped_suites") or ()),
        "archived_cases": list(first.get("archived_cases") or ()),
        "target_version": first.get("target_version"),
        "stages": stages,
        "prerun": evidence.guards(datas, [d.get("prerun") or () for d in datas]),
        "readiness": first.get("readiness") or {},
    }
    failed = next((g for g in merged["prerun"] if not g.get("passed") and g.get("mode") == "block"), None)
    merged["gates"] = judge(datas, cases, stages, prerun_failed=failed)
    specs = [gates.GateSpec.from_record(g) for g in merged["gates"]]
    merged["stages"] = evidence.settle(stages, merged["gates"], specs, cases)
    return artifact.summarize(merged, exit_zero=exit_zero)


def _span_ms(started: str, ended: str, datas: Sequence[Mapping[str, Any]]) -> float:
    try:
        a = datetime.fromisoformat(started.replace("Z", "+00:00"))
        b = datetime.fromisoformat(ended.replace("Z", "+00:00"))
        return round(max(0.0, (b - a).total_seconds() * 1000), 3)
    except ValueError:
        return round(max(float(d.get("duration_ms") or 0.0) for d in datas), 3)

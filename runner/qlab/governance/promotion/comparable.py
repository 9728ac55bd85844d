"""Which cases a promotion compares, and whether the two runs can be compared at all.

Runs are refused (exit 2, nothing decided) when:

- either is one shard of a sharded run (merge the shards first);
- a suite the rule names is in neither run, or the rule's suites hold no case;
- ``same: [cases]`` (the default) and a case file changed (its digest in ``provenance.dataset.files``) while it
  holds the very same case ids in both runs: a case both runs have was edited, and which one cannot be told. A
  file that gained or lost cases is fine: added cases are judged on their own (new passing / new failing),
  removed ones are listed;
- ``same: [case_set]`` and the case ids differ at all, or a case file changed (the strict form);
- ``same: [collection]`` / ``[model]`` / ``[engine]`` / ``[config]`` and the fingerprints differ on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qlab.governance.records import Artifact
from qlab.project.model import PromotionRule

_SHOWN = 5  # ids listed in a refusal before "and N more"


def compared_cases(
    baseline: Artifact, candidate: Artifact, *, rule: PromotionRule, mode: str | None
) -> tuple[list[str], dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]]:
    """(compared suites, baseline cases by id, candidate cases by id).

    The rule's ``suites`` when it names some; else every suite whose mode is the change type's ``mode``
    (search for aliases, plan for selector policy, execute for execute enablement); else every suite.
    """
    if rule.suites:
        suites = list(rule.suites)
    else:
        seen: dict[str, None] = {}
        for artifact in (baseline, candidate):
            for case in artifact.cases:
                if (
                    mode is None
                    or case.get("mode") == mode
                    or _suite_mode(artifact, str(case.get("suite"))) == mode
                ):
                    seen.setdefault(str(case.get("suite")), None)
        suites = list(seen)
    wanted = set(suites)
    base: dict[str, Mapping[str, Any]] = {c["case_id"]: c for c in baseline.cases if c.get("suite") in wanted}
    cand: dict[str, Mapping[str, Any]] = {
        c["case_id"]: c for c in candidate.cases if c.get("suite") in wanted
    }
    return suites, base, cand


def refusals(
    baseline: Artifact,
    candidate: Artifact,
    *,
    rule: PromotionRule,
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """Every reason the two runs cannot be compared under ``rule`` (empty when they can)."""
    out: list[str] = []
    for label, artifact in (("baseline", baseline), ("candidate", candidate)):
        shard = _shard(artifact.data.get("shard"))
        if shard is not None and shard[1] > 1:
            out.append(
                f"the {label} is shard {shard[0]}/{shard[1]} of a run; merge the shards first (`qlab merge`)"
            )
    for suite in rule.suites:
        if not any(_has_suite(a, suite) for a in (baseline, candidate)):
            out.append(f"suite {suite!r} of the rule is in neither run")
    if not base and not cand:
        out.append("the compared suites hold no case in either run: nothing to compare")
    if "case_set" in rule.same:
        out += _case_set_refusals(baseline, candidate, base, cand)
    elif "cases" in rule.same:
        out += _edited_case_refusals(baseline, candidate, base, cand)
    fb = baseline.data.get("fingerprint") or {}
    fc = candidate.data.get("fingerprint") or {}
    fields = {
        "collection": ("collection_digest",),
        "model": ("model", "model_settings"),
        "engine": ("engine",),
        "config": ("config_digest",),
    }
    for key in rule.same:
        for name in fields.get(key, ()):
            b, c = fb.get(name), fc.get(name)
            if key == "collection" and (not b or not c):
                out.append(
                    "same: collection: a run records no fingerprint.collection_digest; cannot check it"
                )
            elif b != c:
                out.append(
                    f"same: {key}: fingerprint.{name} differs: baseline {_short(b)} vs candidate {_short(c)}"
                )
    return out


def _case_set_refusals(
    baseline: Artifact, candidate: Artifact, base: Mapping[str, Any], cand: Mapping[str, Any]
) -> list[str]:
    out: list[str] = []
    only_base = [c for c in base if c not in cand]
    only_cand = [c for c in cand if c not in base]
    if only_base:
        out.append(f"same: case_set: only the baseline has {_ids(only_base)}")
    if only_cand:
        out.append(f"same: case_set: only the candidate has {_ids(only_cand)}")
    files = {str(c.get("file")) for c in (*base.values(), *cand.values()) if c.get("file")}
    digests_b, digests_c = _file_digests(baseline), _file_digests(candidate)
    for path in sorted(files):
        b, c = digests_b.get(path), digests_c.get(path)
        if b and c and b != c:
            out.append(
                f"same: case_set: case file {path} changed between the runs ({_short(b)} vs {_short(c)})"
            )
    return out


def _edited_case_refusals(
    baseline: Artifact, candidate: Artifact, base: Mapping[str, Any], cand: Mapping[str, Any]
) -> list[str]:
    """``same: cases``: a case file whose digest changed although it holds the same case ids in both runs."""
    ids_b: dict[str, set[str]] = {}
    ids_c: dict[str, set[str]] = {}
    for ids, cases in ((ids_b, base), (ids_c, cand)):
        for case_id, case in cases.items():
            if case.get("file"):
                ids.setdefault(str(case["file"]), set()).add(case_id)
    digests_b, digests_c = _file_digests(baseline), _file_digests(candidate)
    out = []
    for path in sorted(set(ids_b) & set(ids_c)):
        b, c = digests_b.get(path), digests_c.get(path)
        if b and c and b != c and ids_b[path] == ids_c[path]:
            out.append(
                f"same: cases: case file {path} changed between the runs ({_short(b)} vs {_short(c)}) with the "
                "same cases in it: a case both runs have was edited; compare runs of the same case definitions"
            )
    return out


def _suite_mode(artifact: Artifact, suite: str) -> str | None:
    info = (artifact.data.get("suites") or {}).get(suite)
    return str(info.get("mode")) if isinstance(info, Mapping) and info.get("mode") else None


def _has_suite(artifact: Artifact, suite: str) -> bool:
    return suite in (artifact.data.get("suites") or {}) or any(
        c.get("suite") == suite for c in artifact.cases
    )


def _file_digests(artifact: Artifact) -> dict[str, str]:
    provenance = artifact.data.get("provenance") or {}
    dataset = provenance.get("dataset") if isinstance(provenance, Mapping) else None
    files = dataset.get("files") if isinstance(dataset, Mapping) else None
    out: dict[str, str] = {}
    for item in files or ():
        if isinstance(item, Mapping) and item.get("path") and item.get("digest"):
            out[str(item["path"])] = str(item["digest"])
    return out


def _shard(value: Any) -> tuple[int, int] | None:
    """``{"index": i, "total": n}`` (or ``count``/``of``), or ``"i/n"`` -> (i, n)."""
    if isinstance(value, Mapping):
        index = value.get("index", value.get("i"))
        total = value.get("total", value.get("count", value.get("of", value.get("n"))))
        if isinstance(index, int) and isinstance(total, int):
            return index, total
    if isinstance(value, str) and "/" in value:
        left, _, right = value.partition("/")
        if left.strip().isdigit() and right.strip().isdigit():
            return int(left), int(right)
    return None


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 23 else text[:23] + "…"

"""The in-run claims check: citation coverage and evidence quality of a response that carries claims.

A case with a ``claims:`` check (``qlab.project.model.ClaimsCheck``) names, by JSONPath, where its final
response keeps its claims and its evidence items. Shapes and figures: docs/governance.md ("Claims and
evidence"), in short:

- **citation coverage** = claims citing an evidence item that exists / claims;
- a **citation** is **valid** when its item exists, the excerpt shares a term (the built-in analyzer's) with
  the claim and a contradicting item is cited by a claim marked ``conflict: true``: ``citation_quality``;
- **evidence quality** = usable items (an id, a source, an excerpt, cited, no earlier duplicate) / items.

The record (``execute.claims``) holds the counts, both figures, the minimums, ``passed``, the distinct
sources of usable items and the first problems; the ``citation_coverage`` and ``evidence_quality`` guards
(``qlab.run.boundary``) judge it at the execute boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.adapters import jsonpath
from qlab.contracts.errors import InputError
from qlab.engine.text import Analyzer
from qlab.project.model import ClaimsCheck

MAX_PROBLEMS = 5
MAX_SOURCES = 20
_ANALYZER = Analyzer()


def _list_at(document: Any, path: str) -> list[Any] | None:
    """The list the JSONPath selects: one match that is a list, or the matches themselves; None when nothing."""
    try:
        found = jsonpath.find(path, document)
    except InputError:
        return None
    if not found:
        return None
    if len(found) == 1 and isinstance(found[0], list):
        return list(found[0])
    return list(found)


def _ids(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value] if value is not None else []
    out = []
    for item in items:
        if isinstance(item, Mapping):
            item = item.get("id")
        if isinstance(item, (str, int)) and not isinstance(item, bool):
            out.append(str(item))
    return out


def _terms(text: Any) -> set[str]:
    return {t for t in _ANALYZER.terms(str(text or "")) if t}


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 6)


def check(document: Any, spec: ClaimsCheck) -> dict[str, Any]:
    """The claims record of one response body (see the module docstring)."""
    claims = _list_at(document, spec.claims)
    items = _list_at(document, spec.evidence)
    if claims is None:
        return {"error": f"no claims at {spec.claims}", "passed": False}
    items = items or []
    problems: list[str] = []
    by_id: dict[str, Mapping[str, Any]] = {}
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and _ids(item.get("id")):
            by_id.setdefault(_ids(item.get("id"))[0], item)
        else:
            problems.append(f"evidence[{index}] has no id")
    cited_ids: set[str] = set()
    cited = citations = valid = conflicts = 0
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            problems.append(f"claim[{index}] is not an object")
            continue
        refs = _ids(claim.get("evidence", claim.get("citations")))
        known = [r for r in refs if r in by_id]
        cited += bool(known)
        if not known and spec.citation_required:
            problems.append(
                f"claim[{index}] cites {'nothing' if not refs else 'no existing item: ' + ', '.join(refs)}"
            )
        words = _terms(claim.get("text", claim.get("claim")))
        for ref in refs:
            citations += 1
            item = by_id.get(ref)
            if item is None:
                continue
            cited_ids.add(ref)
            against = str(item.get("stance", "supports")) == "contradicts"
            if against and claim.get("conflict") is not True:
                conflicts += 1
                problems.append(f"claim[{index}] cites contradicting {ref} without marking the conflict")
            elif not words & _terms(item.get("excerpt")):
                problems.append(f"claim[{index}]: the excerpt of {ref} shares no word with the claim")
            else:
                valid += 1
    usable, sources = _usable(items, cited_ids, problems)
    needing = len(claims) if spec.citation_required else 0
    coverage = _ratio(cited if needing else 0, needing)
    quality = _ratio(usable, len(items))
    passed = (coverage is None or coverage >= spec.min_citation_coverage) and (
        quality is None or quality >= spec.min_evidence_quality
    )
    return {
        "claims": len(claims),
        "needing_citation": needing,
        "cited": cited if needing else 0,
        "citation_coverage": coverage,
        "min_citation_coverage": spec.min_citation_coverage,
        "evidence_items": len(items),
        "usable_evidence": usable,
        "evidence_quality": quality,
        "min_evidence_quality": spec.min_evidence_quality,
        "citations": citations,
        "valid_citations": valid,
        "unhandled_conflicts": conflicts,
        "sources": sources[:MAX_SOURCES],
        "passed": passed,
        "problems": problems[:MAX_PROBLEMS],
    }


def _usable(items: Sequence[Any], cited: set[str], problems: list[str]) -> tuple[int, list[str]]:
    """How many items are usable (see the module docstring), and their distinct sources in order."""
    seen: set[tuple[str, str]] = set()
    usable = 0
    sources: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        ids = _ids(item.get("id"))
        source, excerpt = str(item.get("source") or "").strip(), str(item.get("excerpt") or "").strip()
        why = (
            "has no source"
            if not source
            else "has no excerpt"
            if not excerpt
            else "is cited by no claim"
            if not ids or ids[0] not in cited
            else "repeats an earlier item"
            if (source, excerpt) in seen
            else ""
        )
        seen.add((source, excerpt))
        if why:
            problems.append(f"evidence[{index}] {why}")
            continue
        usable += 1
        if source not in sources:
            sources.append(source)
    return usable, sources

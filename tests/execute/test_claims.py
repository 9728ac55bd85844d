"""The in-run claims check: citation coverage, valid citations (existence, excerpt relevance, conflicts) and
evidence quality (usable items) of a response that carries claims and evidence items."""

from __future__ import annotations

from typing import Any

from qlab.execute.claims import check
from qlab.project.model import ClaimsCheck

SPEC = ClaimsCheck(
    claims="$.data.claims", evidence="$.data.evidence", min_citation_coverage=1.0, min_evidence_quality=0.5
)


def _doc(claims: list[Any], evidence: list[Any]) -> dict[str, Any]:
    return {"data": {"claims": claims, "evidence": evidence}}


def test_every_claim_cites_a_relevant_item() -> None:
    doc = _doc(
        [{"text": "D-5001 is in transit at Daejeon", "evidence": ["ev-1"]},
         {"text": "CJ Logistics carries it", "citations": [{"id": "ev-2"}]}],
        [{"id": "ev-1", "source": "tracking", "excerpt": "D-5001 in transit at Daejeon sorting centre"},
         {"id": "ev-2", "source": "registry", "excerpt": "CJ Logistics (CJ) carries delivery D-5001"}],
    )  # fmt: skip
    record = check(doc, SPEC)
    assert (record["claims"], record["cited"], record["citation_coverage"]) == (2, 2, 1.0)
    assert (record["citations"], record["valid_citations"], record["evidence_quality"]) == (2, 2, 1.0)
    assert record["sources"] == ["tracking", "registry"] and record["passed"] and record["problems"] == []


def test_uncited_claims_unknown_ids_irrelevant_excerpts_and_unmarked_conflicts() -> None:
    doc = _doc(
        [{"text": "the parcel is late", "evidence": ["ev-9"]},  # cites an id that does not exist
         {"text": "it left the hub", "evidence": ["ev-1"]},  # the excerpt shares no word with it
         {"text": "no delay is expected", "evidence": ["ev-2"]},  # contradicting evidence, conflict not marked
         {"text": "rain may slow it", "evidence": ["ev-2"], "conflict": True},  # marked: valid if relevant
         {"text": "nothing cited"}],
        [{"id": "ev-1", "source": "tracking", "excerpt": "scanned at Icheon"},
         {"id": "ev-2", "source": "weather", "excerpt": "rain may slow delivery; no delay expected", "stance": "contradicts"},
         {"id": "ev-3", "source": "tracking", "excerpt": "scanned at Icheon"},  # cited by nobody, and a duplicate
         {"id": "ev-4", "source": "", "excerpt": "x"}],
    )  # fmt: skip
    record = check(doc, SPEC)
    assert (record["claims"], record["cited"], record["citation_coverage"]) == (5, 3, 0.6)
    assert (record["citations"], record["valid_citations"], record["unhandled_conflicts"]) == (4, 1, 1)
    assert (record["evidence_items"], record["usable_evidence"], record["evidence_quality"]) == (4, 2, 0.5)
    assert not record["passed"]  # coverage 0.6 < 1.0
    assert record["problems"][0] == "claim[0] cites no existing item: ev-9"


def test_citations_not_required_and_unreadable_responses() -> None:
    lenient = ClaimsCheck(claims="$.claims", evidence="$.evidence", citation_required=False)
    record = check({"claims": [{"text": "a"}], "evidence": []}, lenient)
    assert (record["needing_citation"], record["citation_coverage"], record["passed"]) == (0, None, True)
    assert check({"other": []}, lenient) == {"error": "no claims at $.claims", "passed": False}

"""Shared records helpers: the trace evidence a proposal carries."""

from __future__ import annotations

import json

from qlab.governance.records import evidence
from qlab.results import CheckedJSON, EncodedJSON, JSONPack


def test_trace_evidence_holds_search_rows_as_data_not_as_text() -> None:
    """A run keeps a case's rows as JSON text (packed); the evidence a proposal carries is written to the
    suggestions file and read back later, so its rows are a list there, never a string of JSON."""
    rows = [{"tool_id": "trackDelivery", "rank": 1, "score": 2.5}]
    for kept in (JSONPack(plain_limit=0).add(CheckedJSON.of(rows)), EncodedJSON.of(rows)):
        case = {
            "case_id": "c",
            "search": {"hit": False, "rows": kept, "top_k": 5},
            "failure": {"stage": "search"},
        }
        found = evidence(case)
        assert found["search"]["rows"] == rows
        assert json.loads(json.dumps(found))["search"]["rows"] == rows

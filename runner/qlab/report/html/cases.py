"""The HTML report's case table: every case that did not pass, right under the decision, each with its cause,
and a filter by status, stage, suite and reason.

Order: the failures that gate first (they decided a BLOCK), then the ones that do not (flaky cases,
``required: false`` suites), then the cases that never ran (blocked by an earlier gate, skipped). Each row says
why: the failure's message and the troubleshooting hint of its reason code, or the gate that stopped the run.

The filter is a few lines of inline script (allowed by the page's Content-Security-Policy through its hash, see
``FILTER_SCRIPT_HASH``; nothing is fetched). With scripts off the page shows every row and the filter stays
hidden: nothing is lost but the filtering.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from qlab.contracts.reasons import hint
from qlab.report import derive
from qlab.report.derive import Artifact, as_mapping
from qlab.report.html.base import Markup, badge, capped, empty, section, show
from qlab.report.html.svg import esc

MAX_CASE_ROWS = 500
NEVER_RAN = ("blocked", "skipped")
FILTERS = (("status", "status"), ("stage", "stage"), ("suite", "suite"), ("reason", "reason"))

# Shows the (hidden) filter form, then hides each row whose data-* attributes do not match every chosen value.
FILTER_SCRIPT = (
    "(()=>{const f=document.getElementById('case-filter');if(!f)return;f.hidden=false;"
    "const rows=[...document.querySelectorAll('#case-table tbody tr')];"
    "const n=document.getElementById('case-shown');"
    "f.addEventListener('change',()=>{let shown=0;"
    "for(const r of rows){let ok=true;for(const s of f.querySelectorAll('select')){"
    "if(s.value&&r.dataset[s.name]!==s.value)ok=false}r.hidden=!ok;if(ok)shown++}"
    "n.textContent=shown+' of '+rows.length+' shown'})})();"
)
FILTER_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(FILTER_SCRIPT.encode()).digest()).decode()


def _order(case: Mapping[str, Any], suites: Mapping[str, Any]) -> int:
    status = str(case.get("status"))
    if status in NEVER_RAN:
        return 2
    required = as_mapping(suites.get(str(case.get("suite")))).get("required", True)
    return 0 if required and not case.get("flaky") else 1


def _cause(case: Mapping[str, Any]) -> Markup:
    failure = as_mapping(case.get("failure"))
    message = str(failure.get("message") or "")
    if str(case.get("status")) in NEVER_RAN:
        return Markup(f'<span class="muted">never ran:</span> {esc(message)}')
    tip = hint(str(failure.get("reason") or ""))
    parts = [str(show(message or None))]
    if tip:
        parts.append(f'<br><span class="note">what to inspect: {esc(tip)}</span>')
    return Markup("".join(parts))


def cases_needing_attention(result: Artifact) -> Markup:
    """Every case that did not pass, failures first, each with its cause; filterable."""
    suites = as_mapping(result.get("suites"))
    bad = [c for c in derive.cases_of(result) if c.get("status") not in ("passed", None)]
    if not bad:
        return section("cases", "Cases that did not pass", empty("Every case passed."))
    bad.sort(key=lambda c: _order(c, suites))  # stable: configuration order within each group
    rows: list[str] = []
    for case in bad:
        failure = as_mapping(case.get("failure"))
        status = str(case.get("status", ""))
        gating = _order(case, suites) == 0
        label = status if gating or status in NEVER_RAN else f"{status} (does not gate)"
        where = f"{case.get('file')}:{case.get('line')}" if case.get("file") else ""
        data = {
            "status": status,
            "stage": str(failure.get("stage") or ""),
            "suite": str(case.get("suite") or ""),
            "reason": str(failure.get("reason") or ""),
        }
        attrs = "".join(f' data-{k}="{esc(v)}"' for k, v in data.items())
        cells = [
            esc(str(case.get("case_id", ""))),
            esc(data["suite"]),
            str(badge(status)) + ("" if label == status else ' <span class="muted">does not gate</span>'),
            esc(data["stage"]),
            f"<code>{esc(data['reason'])}</code>",
            str(_cause(case)),
            esc(where),
        ]
        rows.append(f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    shown, note = capped([(r,) for r in rows], MAX_CASE_ROWS)
    head = "".join(
        f"<th>{esc(h)}</th>" for h in ("case", "suite", "status", "stage", "reason", "cause", "file")
    )
    table = Markup(
        f'<table id="case-table"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(str(r[0]) for r in shown)
        + "</tbody></table>"
    )
    counts = derive.status_counts(result)
    failing = counts["failed"] + counts["error"]
    never = counts["blocked"] + counts["skipped"]
    return section(
        "cases",
        f"Cases that did not pass ({len(bad)})",
        _filter(bad),
        table,
        note,
        Markup(f"<script>{FILTER_SCRIPT}</script>"),
        note=f"{failing} failed or could not be judged, listed first (those that gate before those that do not); "
        f"{never} never ran (blocked by an earlier gate or skipped). Each with its cause.",
    )


def _filter(cases: Sequence[Mapping[str, Any]]) -> Markup:
    """The filter form: one choice per dimension, from the values the rows carry. Hidden until the script runs."""
    selects = []
    for key, label in FILTERS:
        values = sorted(
            {
                str(c.get("status") or "")
                if key == "status"
                else str(c.get("suite") or "")
                if key == "suite"
                else str(as_mapping(c.get("failure")).get(key) or "")
                for c in cases
            }
            - {""}
        )
        options = '<option value="">all</option>' + "".join(
            f'<option value="{esc(v)}">{esc(v)}</option>' for v in values
        )
        selects.append(f'<label>{esc(label)} <select name="{key}">{options}</select></label>')
    return Markup(
        f'<form id="case-filter" class="filter" hidden>{" ".join(selects)} '
        f'<span id="case-shown" class="muted">{len(cases)} of {len(cases)} shown</span></form>'
    )

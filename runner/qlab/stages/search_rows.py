"""A case's Top-K rows as the JSON text its result keeps (``qlab.results.EncodedJSON``).

The long way — ``wire.row_to_dict`` for each row, the JSON encoder, then the result schema's check of the
search object — costs ~45 µs per case of 5 rows, a sixth of a 100,000-case run's search stage besides the
engine. A row of the plain shape (a ``str`` tool id, an ``int`` rank ≥ 1, finite ``float``/``int`` scores under
``str`` field names, ``str`` matched terms and corrections) is written straight to the same text in ~30 µs, and
such a row fits ``definitions/search_row`` of result.schema.json by construction; ``tests/stages/
test_search_rows.py`` checks both (text identical to the long way's, verdict the schema's) on generated rows.
Any other row goes the long way and is left for the in-run schema check to find and word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from math import isfinite
from typing import Any

from qlab.engine.types import SearchRow
from qlab.results import CheckedJSON

_NAMES: dict[str, str] = {}  # field name or tool id -> its JSON string: a run repeats a few thousand of them


def _name(text: str) -> str:
    known = _NAMES.get(text)
    if known is None:
        known = encode_basestring(text)
        if len(_NAMES) < 100_000:
            _NAMES[text] = known
    return known


def _number(value: Any) -> str | None:
    """``value`` rounded as ``wire.row_to_dict`` rounds it, as JSON; None when it is not a finite number."""
    kind = type(value)
    if kind is float:
        return repr(round(value, 4)) if isfinite(value) else None
    if kind is int:
        return repr(value)
    return None


def _strings(pairs: Mapping[Any, Any], *, numbers: bool) -> str | None:
    """A JSON object of str keys to numbers (or to strings); None when a key or value is of another kind."""
    parts = []
    for key, value in pairs.items():
        if type(key) is not str:
            return None
        if numbers:
            text = _number(value)
            if text is None:
                return None
        elif type(value) is str:
            text = encode_basestring(value)
        else:
            return None
        parts.append(f"{_name(key)}:{text}")
    return "{" + ",".join(parts) + "}"


def _row(row: SearchRow) -> str | None:
    """The row's JSON text, as ``wire.row_to_dict`` + the compact encoder write it; None unless it is plain."""
    tool_id, rank = row.tool_id, row.rank
    if type(tool_id) is not str or type(rank) is not int or rank < 1:
        return None
    score = _number(row.score)
    fields = _strings(row.field_scores, numbers=True)
    corrections = _strings(row.corrections, numbers=False) if row.corrections else "{}"
    terms = row.matched_terms
    if score is None or fields is None or corrections is None or any(type(t) is not str for t in terms):
        return None
    return (
        f'{{"tool_id":{_name(tool_id)},"rank":{rank},"score":{score},"field_scores":{fields},'
        f'"matched_terms":[{",".join(map(encode_basestring, terms))}],"corrections":{corrections}}}'
    )


def rows_json(rows: Sequence[SearchRow]) -> CheckedJSON | None:
    """The rows' JSON text when every row is plain (so they fit the schema where they sit), else None."""
    texts = []
    for row in rows:
        text = _row(row)
        if text is None:
            return None
        texts.append(text)
    return CheckedJSON("[" + ",".join(texts) + "]")

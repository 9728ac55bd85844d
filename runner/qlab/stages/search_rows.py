"""A case's Top-K rows as the JSON text its result keeps (``qlab.results.EncodedJSON``).

The long way — ``wire.row_to_dict`` for each row, the JSON encoder, then the result schema's check of the
search object — is most of the search stage's own cost per case. A row of the plain shape (a ``str`` tool id,
an ``int`` rank ≥ 1, finite ``float``/``int`` scores under ``str`` field names, ``str`` matched terms and
corrections) is written straight to the same text: 5 rows in 44 µs instead of 56 (median of 40 interleaved
rounds on the loaded 2-core machine; best 28 vs 38). Such a row fits ``definitions/search_row`` of
result.schema.json by construction; ``tests/stages/test_search_rows.py`` checks both (text identical to the
long way's, verdict the schema's) on generated rows. Any other row goes the long way and is left for the in-run schema check to find and word.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring
from math import isfinite

from qlab.engine.types import SearchRow
from qlab.results import CheckedJSON

_NAMES: dict[str, str] = {}  # field name or tool id -> its JSON string: a run repeats a few thousand of them


def _name(text: str) -> str:
    known = encode_basestring(text)
    if len(_NAMES) < 100_000:
        _NAMES[text] = known
    return known


def _row(row: SearchRow) -> str | None:
    """The row's JSON text, as ``wire.row_to_dict`` + the compact encoder write it; None unless it is plain.

    One flat function on purpose: it runs for every row of every case, and a call per number costs ~15%."""
    tool_id, rank, score = row.tool_id, row.rank, row.score
    if type(tool_id) is not str or type(rank) is not int or rank < 1:
        return None
    kind = type(score)
    if kind is float and isfinite(score):
        score_text = repr(round(score, 4))  # wire.row_to_dict's rounding; json writes a float as its repr
    elif kind is int:
        score_text = repr(score)
    else:
        return None
    fields = []
    for key, value in row.field_scores.items():
        kind = type(value)
        if kind is float and isfinite(value):
            text = repr(round(value, 4))
        elif kind is int:
            text = repr(value)
        else:
            return None
        name = _NAMES.get(key)
        if name is None:
            if type(key) is not str:
                return None
            name = _name(key)
        fields.append(name + ":" + text)
    terms = row.matched_terms
    for term in terms:
        if type(term) is not str:
            return None
    corrections = ""
    if row.corrections:
        pairs = []
        for wrong, right in row.corrections.items():
            if type(wrong) is not str or type(right) is not str:
                return None
            pairs.append(encode_basestring(wrong) + ":" + encode_basestring(right))
        corrections = ",".join(pairs)
    return (
        '{"tool_id":' + (_NAMES.get(tool_id) or _name(tool_id)) + ',"rank":' + repr(rank) + ',"score":'
        + score_text + ',"field_scores":{' + ",".join(fields) + '},"matched_terms":['
        + ",".join(map(encode_basestring, terms)) + '],"corrections":{' + corrections + "}}"
    )  # fmt: skip


def rows_json(rows: Sequence[SearchRow]) -> CheckedJSON | None:
    """The rows' JSON text when every row is plain (so they fit the schema where they sit), else None."""
    texts = []
    for row in rows:
        text = _row(row)
        if text is None:
            return None
        texts.append(text)
    return CheckedJSON("[" + ",".join(texts) + "]")

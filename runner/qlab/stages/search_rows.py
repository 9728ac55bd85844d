"""A case's Top-K rows as the JSON text its result keeps (``qlab.results.EncodedJSON``).

The long way — ``wire.row_to_dict`` for each row, the JSON encoder, then the result schema's check of the
search object — is most of the search stage's own cost per case. A row of the plain shape (a ``str`` tool id,
an ``int`` rank ≥ 1, finite ``float``/``int`` scores under ``str`` field names, ``str`` matched terms and
corrections) is written straight to the same text: 5 rows in 35 µs instead of 51 (median of 40 interleaved
rounds on the loaded 2-core machine; best 21 vs 36). Such a row fits ``definitions/search_row`` of
result.schema.json by construction; ``tests/stages/test_search_rows.py`` checks both (text identical to the
long way's, verdict the schema's) on generated rows. Any other row goes the long way and is left for the in-run schema check to find and word.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring
from math import isfinite
from types import MappingProxyType
from typing import Any

from qlab.engine.types import SearchRow
from qlab.memo import Generations
from qlab.results import CheckedJSON

_NAMES: dict[str, str] = {}  # field name or tool id -> its JSON string: a run repeats a few thousand of them


def _name(text: str) -> str:
    known = encode_basestring(text)
    if len(_NAMES) < 100_000:
        _NAMES[text] = known
    return known


# Below this, a float rounded to 4 places has at most 15 significant digits, so json's repr of the rounded
# float is the "%.4f" text without its trailing zeros (both round the exact binary value the same way): half
# the time of round() + repr().
_EXACT = 1e11


def _number(value: Any) -> str | None:
    """``round(value, 4)`` as json writes it (``wire.row_to_dict``'s rounding); None unless a finite number."""
    kind = type(value)
    if kind is float:
        if -_EXACT < value < _EXACT:
            text = f"{value:.4f}"
            text = text.rstrip("0")
            return text + "0" if text[-1] == "." else text
        return repr(round(value, 4)) if isfinite(value) else None
    if kind is int:
        return repr(value)
    return None


# The built-in engine shares a row's evidence objects (field scores, matched terms, corrections) between the
# rows and queries that show the same evidence: their JSON is written once and reused. Keyed by the field
# scores' identity (an int key: ~130 bytes an entry less than a tuple of the three ids, ~15 MiB at 100,000
# cases), the three objects kept alive with the text (an id is never reused while its object lives) and the
# other two checked by identity on a hit.
# Two generations of 20,000, like the engine's evidence (``qlab.engine.index``, ``qlab.memo.Generations``).
_TAILS: Generations[int, tuple[object, object, object, str]] = Generations(20_000)


def trim() -> None:
    """Drop the memoized JSON of names and evidence (between a run's gates they only hold memory)."""
    _TAILS.clear()
    _NAMES.clear()


def _row(row: SearchRow) -> str | None:
    """The row's JSON text, as ``wire.row_to_dict`` + the compact encoder write it; None unless it is plain.

    Flat on purpose: it runs for every row of every case, and a call per number costs ~15%."""
    tool_id, rank, score = row.tool_id, row.rank, row.score
    if type(tool_id) is not str or type(rank) is not int or rank < 1:
        return None
    score_text = _number(score)
    if score_text is None:
        return None
    field_scores, terms, fixes = row.field_scores, row.matched_terms, row.corrections
    key = id(field_scores)
    known = _TAILS.get(key)
    if known is None or known[1] is not terms or known[2] is not fixes:
        tail = _tail(field_scores, terms, fixes)
        if tail is None:
            return None
        if (
            type(field_scores) is MappingProxyType
            and type(fixes) is MappingProxyType
            and type(terms) is tuple
        ):
            _TAILS.put(key, (field_scores, terms, fixes, tail))
    else:
        tail = known[3]
    return (
        '{"tool_id":' + (_NAMES.get(tool_id) or _name(tool_id)) + ',"rank":' + repr(rank) + ',"score":'
        + score_text + tail
    )  # fmt: skip


def _tail(field_scores: Any, terms: Any, fixes: Any) -> str | None:
    """``,"field_scores":{...},"matched_terms":[...],"corrections":{...}}``; None unless plain."""
    fields = []
    for key, value in field_scores.items():
        if type(value) is float and -_EXACT < value < _EXACT:  # _number's first case, inline (the hot loop)
            text = f"{value:.4f}"
            text = text.rstrip("0")
            if text[-1] == ".":
                text += "0"
        else:
            other = _number(value)
            if other is None:
                return None
            text = other
        name = _NAMES.get(key)
        if name is None:
            if type(key) is not str:
                return None
            name = _name(key)
        fields.append(name + ":" + text)
    for term in terms:
        if type(term) is not str:
            return None
    corrections = ""
    if fixes:
        pairs = []
        for wrong, right in fixes.items():
            if type(wrong) is not str or type(right) is not str:
                return None
            pairs.append(encode_basestring(wrong) + ":" + encode_basestring(right))
        corrections = ",".join(pairs)
    return (
        ',"field_scores":{' + ",".join(fields) + '},"matched_terms":['
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

"""One answer's vector scans, kept while it is made (search/semantic.py reads and fills them).

Per thread: a door answers several questions at once, each on its own thread. Moved out of
semantic.py (its 500 lines); the index state an answer pins is index/kept_state.py's `pinned`.
"""

from __future__ import annotations

from _thread import _local

_MEMO = _local()


def begin_answer() -> None:
    """A new answer on this thread: what the last one scanned is dropped (the pipeline calls it)."""
    _MEMO.entries = {}
    _MEMO.slices = {}


def kept_slices() -> dict:
    """{(connection, its state, fingerprint): the kept arrays of the slice} this answer ranked by
    the matrix (semantic._exact_of_nearest): any version in them has all its passages with a vector there."""
    slices = getattr(_MEMO, "slices", None)
    if slices is None:
        slices = _MEMO.slices = {}
    return slices


def answer_memo() -> dict:
    """{what was scanned: its rows} of this answer (semantic._scanned, meaning_of)."""
    entries = getattr(_MEMO, "entries", None)
    if entries is None or len(entries) > 8:  # a caller outside the pipeline never begins an answer
        entries = _MEMO.entries = {}
    return entries


def approx() -> dict:
    """{fingerprint: (kept arrays, question vector, their ranking)}: the last product per model
    (semantic._approximate), kept across answers on this thread."""
    kept = getattr(_MEMO, "approx", None)
    if kept is None:
        kept = _MEMO.approx = {}
    return kept

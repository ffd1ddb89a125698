"""Exact sqlite-vec scores from the rows a door keeps of a large slice, not from the index again.

A long-lived door ranks a large slice by one matrix product over its kept rows (semantic.py), then
scores the versions that can be in the top exactly, with sqlite-vec. Reading those passages' blobs
from the index again (a join of `vtext` and `vectors`, each blob on its overflow pages) cost more
than the scoring: 10k keys, ~1.5 ms an answer. The kept rows are the index's blobs byte for byte
(float32 little-endian, read as they are), so binding them to the same sqlite-vec functions in one
statement gives the same numbers. `kept`: semantic._approximate's arrays of the slice
(matrix_rank.SliceArrays), sorted by version.
"""

from __future__ import annotations

from kyb_cli.core.index.vectors import centred_cosine_sql, cosine_sql

BOUND_MAX = 2000  # passages bound to one statement (SQLite allows 32766); more: the caller's join
_COSINE = cosine_sql("column1", "?")  # a bound passage's to the question (bound first)
_CENTRED = centred_cosine_sql("column1", "?", "?")  # the centre, then the centred question, bound first


def holding(kept: tuple, vids: list[int]) -> list[int]:
    """The versions among `vids` the kept slice holds (each with all its passages that have a vector)."""
    at = kept.by_version[0]
    return [v for v in vids if v in at]


def cosines(conn, qvec: bytes, vids: list[int], kept: tuple) -> dict[int, list] | None:
    """{vid: [(part, cosine)]} of every passage of `vids` (all held: holding()), in part order,
    by sqlite-vec on `conn` (any connection with it loaded); None past BOUND_MAX passages."""
    sub, (at, starts, count, parts) = kept.sub, kept.by_version
    rows = []
    for vid in vids:
        g = at[vid]
        rows += [(vid, parts[r], r) for r in range(starts[g], starts[g] + count[g])]
    if len(rows) > BOUND_MAX:
        return None
    marks = ",".join(f"(?, {i})" for i in range(len(rows)))
    cos = dict(conn.execute(f"SELECT column2, {_COSINE} FROM (VALUES {marks})",
                            (qvec, *(sub[r].tobytes() for _v, _p, r in rows))))
    out: dict[int, list] = {}
    for i, (vid, part, _r) in enumerate(rows):
        out.setdefault(vid, []).append((part, cos[i]))
    return out


def calibrated(conn, centre: tuple[bytes, bytes], picks: list[tuple[int, int]], kept: tuple) -> dict:
    """semantic._calibrated of (vid, part) passages the kept slice holds: {vid: centred cosine}."""
    sub, (at, starts, count, parts) = kept.sub, kept.by_version
    bound, marks = [centre[1], centre[0]], []
    for vid, part in picks:
        g = at.get(vid)
        r = None if g is None else next((r for r in range(starts[g], starts[g] + count[g]) if parts[r] == part), None)
        if r is not None:
            bound.append(sub[r].tobytes())
            marks.append(f"(?, {int(vid)})")
    if not marks:
        return {}
    sql = f"SELECT column2, {_CENTRED} FROM (VALUES {','.join(marks)})"
    return {vid: None if z is None else float(z) for vid, z in conn.execute(sql, bound)}

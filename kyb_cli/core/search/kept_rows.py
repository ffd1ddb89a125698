"""Exact sqlite-vec scores from the rows a door keeps of a large slice, not from the index again.

A long-lived door ranks a large slice by one matrix product over its kept rows (semantic.py), then
scores the versions that can be in the top exactly, with sqlite-vec. Reading those passages' blobs
from the index again (a join of `vtext` and `vectors`, each blob on its overflow pages) cost more
than the scoring: 10k keys, ~1.5 ms an answer. The kept rows are the index's blobs byte for byte
(float32 little-endian, read as they are), so binding them to the same sqlite-vec functions in one
statement gives the same numbers. A door (numpy loaded) makes those numbers by door_scan's
arithmetic instead (sqlite-vec's float32 sums in dimension order, the same doubles:
tests/test_door_scan.py, tests/test_kept_rows.py): binding ~100 blobs to a statement and reading
its rows back cost more than the cosines (10k keys: ~0.2 ms a call, 5 calls an English answer,
against ~0.03 ms by numpy). `kept`: semantic._approximate's arrays of the slice
(vids, first-passage flags, rows, starts, groups, counts, states, parts, keys), sorted by version.
"""

from __future__ import annotations

from kyb_cli.core.index.vectors import centred_cosine_sql, cosine_sql

BOUND_MAX = 2000  # passages bound to one statement (SQLite allows 32766); more: the caller's join
_COSINE = cosine_sql("column1", "?")  # a bound passage's to the question (bound first)
_CENTRED = centred_cosine_sql("column1", "?", "?")  # the centre, then the centred question, bound first


def holding(kept: tuple, vids: list[int]) -> list[int]:
    """The versions among `vids` the kept slice holds (each with all its passages that have a vector)."""
    import numpy as np

    uniq = kept[0]
    at = np.searchsorted(uniq, vids).tolist()
    return [v for v, g in zip(vids, at) if g < len(uniq) and uniq[g] == v]


def cosines(conn, qvec: bytes, vids: list[int], kept: tuple) -> dict[int, list] | None:
    """{vid: [(part, cosine)]} of every passage of `vids` (all held: holding()), in part order,
    by sqlite-vec on `conn` (any connection with it loaded); None past BOUND_MAX passages."""
    import numpy as np

    uniq, _fixed, sub, starts, _group, count, _states, parts = kept[:8]
    rows = [(int(uniq[g]), int(parts[r]), r) for g in np.searchsorted(uniq, vids).tolist()
            for r in range(starts[g], starts[g] + count[g])]
    if len(rows) > BOUND_MAX:
        return None
    cos = by_numpy(sub[[r for _v, _p, r in rows]], qvec)
    if cos is None:  # a question of another length: sqlite-vec's SQL answers (and errs), as before
        marks = ",".join(f"(?, {i})" for i in range(len(rows)))
        got = dict(conn.execute(f"SELECT column2, {_COSINE} FROM (VALUES {marks})",
                                (qvec, *(sub[r].tobytes() for _v, _p, r in rows))))
        cos = [got[i] for i in range(len(rows))]
    out: dict[int, list] = {}
    for (vid, part, _r), c in zip(rows, cos):
        out.setdefault(vid, []).append((part, c))
    return out


def by_numpy(mat, qvec: bytes) -> list | None:
    """`1.0 - vec_distance_cosine(row, ?)` of each row of `mat` (k x dim float32) by door_scan's
    arithmetic (its columns, a zero column after them), None where SQL gives NULL (a zero row), in
    row order; None for a question of another length (the SQL then answers)."""
    import numpy as np

    from kyb_cli.core.search.door_scan import _cosine, _norms

    if len(qvec) != mat.shape[1] * 4 or mat.dtype != np.dtype("<f4"):
        return None
    cols = np.zeros((mat.shape[1], len(mat) + 1), dtype=np.float32)  # + a zero column: door_scan.cosines
    cols[:, :len(mat)] = mat.T
    return [None if c != c else c for c in _cosine(cols, _norms(cols), qvec)[:-1].tolist()]  # NaN: NULL


def calibrated(conn, centre: tuple[bytes, bytes], picks: list[tuple[int, int]], kept: tuple) -> dict:
    """semantic._calibrated of (vid, part) passages the kept slice holds: {vid: centred cosine}."""
    import numpy as np

    uniq, _fixed, sub, starts, _group, count, _states, parts = kept[:8]
    at = np.searchsorted(uniq, [vid for vid, _p in picks]).tolist()
    found = []  # (vid, its row)
    for (vid, part), g in zip(picks, at):
        if g < len(uniq) and uniq[g] == vid:
            r = next((r for r in range(starts[g], starts[g] + count[g]) if parts[r] == part), None)
            if r is not None:
                found.append((int(vid), r))
    if not found:
        return {}
    z = _centred_by_numpy(sub[[r for _v, r in found]], centre)
    if z is not None:  # 10k keys: ~0.05 ms a call against ~0.3 by binding the rows to SQL
        return dict(zip((vid for vid, _r in found), z))
    bound = [centre[1], centre[0], *(sub[r].tobytes() for _v, r in found)]
    marks = [f"(?, {vid})" for vid, _r in found]
    sql = f"SELECT column2, {_CENTRED} FROM (VALUES {','.join(marks)})"
    return {vid: None if z is None else float(z) for vid, z in conn.execute(sql, bound)}


def _centred_by_numpy(mat, centre: tuple[bytes, bytes]) -> list | None:
    """`1.0 - vec_distance_cosine(vec_sub(row, centre), centred question)` of each row of `mat` as
    door_scan.centred makes it (the float32 difference, then its cosine): floats, None for NULL;
    None when the lengths differ (the SQL answers)."""
    import numpy as np

    qc, cp = centre
    if len(cp) != mat.shape[1] * 4 or len(qc) != len(cp) or mat.dtype != np.dtype("<f4"):
        return None
    return by_numpy(np.subtract(mat, np.frombuffer(cp, dtype="<f4")), qc)

"""door_scan.cosines: sqlite-vec's cosine of the door copy's passages, made by numpy, must be the
very doubles its SQL gives (the answers rank by them), for any number of passages, and NULL
(NaN) where SQL gives NULL."""

from __future__ import annotations

import apsw
import numpy as np
import pytest

from kyb_cli.core.index.vectors import load_vec
from kyb_cli.core.search import door_scan


def _copy(vectors: np.ndarray) -> door_scan.Copy:
    db = apsw.Connection(":memory:")
    load_vec(db)
    db.execute("CREATE TABLE p(vid INTEGER, state TEXT, part INTEGER, vec BLOB, PRIMARY KEY (vid, part)) WITHOUT ROWID")
    rows = [(i // 3, "current", i % 3, v.astype("<f4").tobytes()) for i, v in enumerate(vectors)]
    db.executemany("INSERT INTO p VALUES (?, ?, ?, ?)", rows)
    return door_scan.Copy(db, rows, {r[0]: f"k{r[0]}" for r in rows})


def _sql(copy: door_scan.Copy, qvec: bytes) -> np.ndarray:
    return np.array([np.nan if c is None else c for (c,) in copy.db.execute(door_scan._SCAN, (qvec,))],
                    dtype=np.float64)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 204, 2100])
def test_cosines_are_sqlite_vecs_doubles(n):
    rng = np.random.default_rng(n)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if n > 2:
        vectors[1] = 0  # a zero vector: NULL in SQL
        vectors[2] *= 3.7  # not unit length: the norms count
    copy = _copy(vectors)
    for _ in range(20):
        q = rng.standard_normal(384).astype(np.float32)
        q /= np.linalg.norm(q)
        qvec = q.astype("<f4").tobytes()
        got, want = door_scan.cosines(copy, qvec), _sql(copy, qvec)
        assert np.array_equal(np.isnan(got), np.isnan(want))  # NaN where SQL is NULL
        assert got[~np.isnan(got)].tobytes() == want[~np.isnan(want)].tobytes()  # else the same bits


def test_scan_falls_back_to_sql_and_none_as_before():
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((6, 384)).astype(np.float32)
    copy = _copy(vectors)
    zero = np.zeros(384, dtype="<f4").tobytes()
    assert door_scan.scan(copy, zero, 0.02, 0.7, 0.003) is None  # a zero question: the caller's SQL path
    assert door_scan.cosines(copy, b"\0" * 16) is None  # another length: sqlite-vec's SQL answers (and errs)
    vectors[4] = 0
    assert door_scan.scan(_copy(vectors), vectors[0].tobytes(), 0.02, 0.7, 0.003) is None


@pytest.mark.parametrize("k", [1, 9, 16, 17, 40])
def test_centred_scores_are_the_sqls(k):
    """door_scan.centred: semantic._calibrated's centred cosines on the copy, the same doubles, for any
    number of picks, asked once or again for other picks of the same question (its kept scores of
    every passage), a pick the copy lacks left out as the SQL leaves it."""
    from kyb_cli.core.search.semantic import _calibrated

    rng = np.random.default_rng(k)
    vectors = rng.standard_normal((120, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[5] = 0  # (1, 2): NULL in SQL
    copy = _copy(vectors)  # 40 versions of 3 passages
    for centre in (rng.standard_normal(384).astype("<f4") * 0.1, rng.standard_normal(384).astype("<f4") * 0.1):
        for _ in range(10):
            qc = rng.standard_normal(384).astype("<f4")
            bound = (qc.tobytes(), centre.tobytes())
            for _again in range(2):
                picks = [(vid, int(rng.integers(0, 3))) for vid in rng.choice(range(2, 40), size=min(k, 38), replace=False).tolist()]
                picks += [(1, 2), (99, 0)]  # a zero vector, a version the copy lacks
                got, want = door_scan.centred(copy, bound, picks), _calibrated(copy.db, "fp", bound, picks, True)
                assert got.keys() == want.keys()
                for vid, z in want.items():
                    assert (got[vid] is None and z is None) or (got[vid] is not None and got[vid].hex() == z.hex())


def test_no_columns_for_odd_vectors_the_sql_scans():
    """A copy whose vectors are not all blobs of one length has no columns: cosines() leaves it to the SQL."""
    rows = [(1, "current", 0, b"\0" * 16), (2, "current", 0, b"\0" * 8)]
    assert door_scan._columns(rows) == (None, None, None)
    assert door_scan._columns([(1, "current", 0, None)]) == (None, None, None)


def test_run_firsts_marks_where_each_run_of_equal_values_starts():
    """door_scan.run_firsts, the one "first of each run" every door ranking reads (a copy's versions,
    the first of tied passages, a slice's versions), against numpy's own spelling of it."""
    import numpy as np

    from kyb_cli.core.search.door_scan import run_firsts

    rng = np.random.RandomState(3)
    for values in [np.zeros(0, dtype=np.int64), np.array([7]), np.array([1, 1, 2, 3, 3, 3, 9]),
                   *(np.sort(rng.randint(0, 6, n)) for n in range(1, 40))]:
        want = np.r_[True, values[1:] != values[:-1]] if len(values) else np.zeros(0, dtype=bool)
        got = run_firsts(values)
        assert got.dtype == bool and got.tolist() == want.tolist()


def test_run_lengths_counts_each_run_from_where_it_starts():
    """door_scan.run_lengths, the one "length of each run" of a copy's and a slice's versions, against
    numpy's own spelling of it (np.diff of the starts and the end)."""
    import numpy as np

    from kyb_cli.core.search.door_scan import run_firsts, run_lengths

    rng = np.random.RandomState(5)
    for values in [np.zeros(0, dtype=np.int64), np.array([7]), np.array([1, 1, 2, 3, 3, 3, 9]),
                   *(np.sort(rng.randint(0, 6, n)) for n in range(1, 40))]:
        starts = np.flatnonzero(run_firsts(values))
        got = run_lengths(starts, len(values))
        assert got.tolist() == np.diff(np.r_[starts, len(values)]).tolist()
        assert got.sum() == len(values)

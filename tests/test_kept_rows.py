"""kept_rows: a door's exact scores of a large slice's candidates from its kept rows. The numpy path
(door_scan's arithmetic) must give the very doubles sqlite-vec's SQL gives over the same blobs, NULL
(None) where SQL gives NULL, for the cosines and for the calibrated (centred) ones."""

from __future__ import annotations

import apsw
import numpy as np
import pytest

from kyb_cli.core.index.vectors import load_vec
from kyb_cli.core.search import kept_rows


def _kept(rng, versions: int):
    """A kept slice of `versions` versions of 1-3 passages (semantic._approximate's arrays)."""
    count = rng.integers(1, 4, size=versions)
    vid = np.repeat(np.arange(10, 10 + versions, dtype=np.int64) * 3, count)
    parts = np.concatenate([np.arange(c) for c in count]).astype(np.int64)
    sub = rng.standard_normal((len(vid), 384)).astype("<f4")
    sub /= np.linalg.norm(sub, axis=1, keepdims=True)
    if len(sub) > 2:
        sub[1] = 0  # a zero vector: NULL in SQL
        sub[2] *= 3.7  # not unit length: the norms count
    new = np.r_[True, vid[1:] != vid[:-1]]
    starts, group = np.flatnonzero(new), np.cumsum(new) - 1
    return (vid[starts], None, sub, starts, group, count, {}, parts)


def _db():
    db = apsw.Connection(":memory:")
    load_vec(db)
    return db


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and float(a).hex() == float(b).hex())


@pytest.mark.parametrize("versions", [1, 3, 40, 300])
def test_cosines_by_numpy_are_the_sqls(versions, monkeypatch):
    rng = np.random.default_rng(versions)
    kept, db = _kept(rng, versions), _db()
    for _ in range(10):
        q = rng.standard_normal(384).astype("<f4")
        vids = rng.choice(kept[0], size=min(versions, 25), replace=False).tolist()
        got = kept_rows.cosines(db, q.tobytes(), vids, kept)
        with monkeypatch.context() as m:
            m.setattr(kept_rows, "by_numpy", lambda mat, qvec: None)  # the SQL of before
            want = kept_rows.cosines(db, q.tobytes(), vids, kept)
        assert got.keys() == want.keys()
        for vid in want:
            assert [p for p, _c in got[vid]] == [p for p, _c in want[vid]]
            assert all(_same(a, b) for (_p, a), (_q, b) in zip(got[vid], want[vid]))


@pytest.mark.parametrize("versions", [1, 3, 40])
def test_calibrated_by_numpy_are_the_sqls(versions, monkeypatch):
    rng = np.random.default_rng(versions + 100)
    kept, db = _kept(rng, versions), _db()
    for _ in range(10):
        centre = (rng.standard_normal(384).astype("<f4").tobytes(), (rng.standard_normal(384) * 0.1).astype("<f4").tobytes())
        picks = [(int(v), int(rng.integers(0, 3))) for v in kept[0]] + [(int(kept[0][0]), 0), (7, 0)]
        got = kept_rows.calibrated(db, centre, picks, kept)
        with monkeypatch.context() as m:
            m.setattr(kept_rows, "_centred_by_numpy", lambda mat, centre: None)  # the SQL of before
            want = kept_rows.calibrated(db, centre, picks, kept)
        assert got.keys() == want.keys()
        assert all(_same(got[v], want[v]) for v in want)


def test_a_question_of_another_length_goes_to_the_sql():
    kept = _kept(np.random.default_rng(1), 3)
    assert kept_rows.by_numpy(kept[2][:2], b"\0" * 16) is None
    assert kept_rows._centred_by_numpy(kept[2][:2], (b"\0" * 16, b"\0" * 16)) is None

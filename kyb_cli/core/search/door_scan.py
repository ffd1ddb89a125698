"""A long-lived door's vector scan of a small slice: its own copy of the slice's passages and vectors.

Below semantic.MATRIX_FROM vectors a door scans the slice with sqlite-vec, exactly (no matrix first).
Joining the slice, `vtext` and `vectors` was half of that scan, and turning passages into versions
in Python the other half (108 runbooks: ~0.35 ms each, twice a question). So a door copies the
slice's passages (vid, state, part, vec) once into an in-memory database with sqlite-vec, kept per
connection while the index is unchanged (vectors.db_state: its own writes, another connection's
commit), with the passages grouped by version for numpy. A question's cosines are then sqlite-vec's own
arithmetic done by numpy on the copy's matrix (cosines: float32 products summed one dimension
after another, as its C loop does; 108 runbooks: 0.07 ms a side against 0.29 by its SQL, the same
doubles, tests/test_door_scan.py), and per version the same float arithmetic as
semantic._version_score (IEEE sums and products, the length penalty's log taken by math.log):
the same scores (tests/test_warm_semantic.py).

A large slice is ranked by a matrix product instead (semantic._approximate), one per model and
question. Its product for the second model of a route is made on that model's own thread, right
after the question's vector (prime: embed.query_vectors' hook), side by side with the first model's
run and product on the answering thread, from the arrays under which the door ranked that model
last; the answer takes it only when they are the arrays it ranks now (primed: the same function of
the same inputs, so the same doubles; tests/test_warm_semantic.py).
"""

from __future__ import annotations

import math

from kyb_cli.core.index.vectors import PASSAGE_VECTOR, conn_memo, cosine_sql, load_vec, per_state

COPIES_MAX = 8  # slices copied per connection (time modes and filters make new ones); more: start over
_SCAN = f"SELECT {cosine_sql('vec', '?')} FROM p ORDER BY vid, part"  # each passage's cosine, in the copy's order


class Copy:
    """One slice's passages under one model: `db` (table p: vid, state, part, vec, in (vid, part)
    order) and, per version in that order, what the scan's reduction needs."""

    __slots__ = ("db", "vids", "states", "keys", "parts", "first", "starts", "group", "multi", "logs", "cols", "norms",
                 "rows", "mat", "centred_cols", "last_centred")

    def __init__(self, db, rows: list[tuple], keys: dict[int, str]) -> None:
        import numpy as np

        self.db, self.keys = db, keys  # keys: {vid: key}, the tie-break nearest reads
        vid = np.array([r[0] for r in rows], dtype=np.int64)
        new = run_firsts(vid)
        self.starts = np.flatnonzero(new)
        self.group = np.cumsum(new) - 1
        count = run_lengths(self.starts, len(vid))
        self.multi = count > 1
        self.vids = vid[self.starts].tolist()
        self.states = [rows[i][1] for i in self.starts.tolist()]
        self.parts = np.array([r[2] for r in rows], dtype=np.int64)
        self.first = np.array([r[2] == 0 for r in rows], dtype=np.float64)
        self.logs = np.array([math.log(n) for n in count.tolist()], dtype=np.float64)
        self.mat, self.cols, self.norms = _columns(rows)
        self.rows = {(r[0], r[2]): i for i, r in enumerate(rows)}  # (vid, part) -> its column
        self.centred_cols = None  # (passage centre, its centred columns, their norms): centred()
        self.last_centred = None  # (centred question, passage centre, every passage's centred cosine)


def _columns(rows: list[tuple]):
    """(the passages' vectors as rows, as columns: dim x passages float32, each passage's sqrt of
    its float32 sum of squares as a double), what cosines() reads; Nones when a vector is not a blob or the
    lengths differ (sqlite-vec's SQL then scans, as before)."""
    import numpy as np

    if not rows or not all(isinstance(r[3], bytes) for r in rows) or len({len(r[3]) for r in rows}) != 1 \
            or len(rows[0][3]) % 4:
        return None, None, None
    mat = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(len(rows), -1)
    cols = np.zeros((mat.shape[1], len(rows) + 1), dtype=np.float32)  # + a zero column: see cosines
    cols[:, :len(rows)] = mat.T
    return mat, cols, _norms(cols)


def cosines(copy: Copy, qvec: bytes):
    """`1.0 - vec_distance_cosine(vec, ?)` of every passage of the copy, in its order, as float64:
    sqlite-vec's distance_cosine_float (float32 dot and squares summed in dimension order, sqrt and
    the division in double, the distance rounded to float32), NaN where SQL gives NULL (a zero vector).
    The reduction runs down axis 0 of the columns, so each passage's sum is taken in dimension order:
    numpy's pairwise summation is only for a contiguous reduced axis, which one column alone would
    be (its axis 1 dropped), hence the zero column after the passages. None: a question of another
    length, or no columns (the SQL answers)."""
    cols = copy.cols
    if cols is None or len(qvec) != cols.shape[0] * 4:
        return None
    return _cosine(cols, copy.norms, qvec)[:-1]  # the passages' (the zero column's NaN dropped)


def _norms(cols):
    """Each column's sqrt of its float32 sum of squares (in dimension order), as a double."""
    import numpy as np

    return np.sqrt((cols * cols).sum(axis=0, dtype=np.float32).astype(np.float64))


def _cosine(cols, norms, qvec: bytes):
    """cosines' arithmetic for columns `cols` (dim x k+1, the last one zero) with their `_norms` and
    the question: float64 of k+1 (the last one NaN)."""
    import numpy as np

    q = np.frombuffer(qvec, dtype="<f4")
    dot = (cols * q[:, None]).sum(axis=0, dtype=np.float32)
    qq = np.cumsum(q * q, dtype=np.float32)[-1]  # in dimension order too (an accumulation)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dist = (1.0 - dot.astype(np.float64) / (norms * np.sqrt(np.float64(qq)))).astype(np.float32)
    return 1.0 - dist.astype(np.float64)


def centred(copy: Copy, centre: tuple[bytes, bytes], picks: list[tuple[int, int]]) -> dict | None:
    """semantic._calibrated's scores on the copy ({vid: the centred cosine, None for SQL's NULL}):
    `1.0 - vec_distance_cosine(vec_sub(vec, centre), centred question)`, vec_sub a float32
    difference, the cosine as cosines() makes it. None: no columns or another length (its SQL answers).

    Every passage of the copy is scored at once, kept for the question (`last_centred`): an English
    answer asks twice (e5's top, then route.combine's English-only hits), and a column's cosine is
    the same whatever columns stand beside it (summed down axis 0). The centred columns are made once
    per passage centre (a calibration's constant). 108 runbooks, 204 passages: 40 picks 97 µs by
    their own columns, all of them 55 µs, and the second ask a dict look-up."""
    qc, cp = centre
    cols = copy.cols
    if cols is None or len(qc) != cols.shape[0] * 4 or len(cp) != len(qc):
        return None
    last = copy.last_centred
    if last is None or last[0] != qc or last[1] != cp:
        last = copy.last_centred = (qc, cp, _centred_all(copy, qc, cp))
    z, rows = last[2], copy.rows
    return {vid: None if math.isnan(z[rows[p]]) else z[rows[p]] for p in picks if p in rows
            for vid in (p[0],)}


def _centred_all(copy: Copy, qc: bytes, cp: bytes) -> list:
    """Every passage's centred cosine, in the copy's order (centred's arithmetic)."""
    import numpy as np

    kept = copy.centred_cols
    if kept is None or kept[0] != cp:
        sub = np.zeros((copy.mat.shape[0] + 1, copy.mat.shape[1]), dtype=np.float32)  # + a zero row: see cosines
        np.subtract(copy.mat, np.frombuffer(cp, dtype="<f4"), out=sub[:-1])
        ccols = sub.T.copy()
        kept = copy.centred_cols = (cp, ccols, _norms(ccols))
    return _cosine(kept[1], kept[2], qc)[:-1].tolist()


def run_firsts(values):
    """A boolean mask of `values` (sorted, grouped): True where a run of equal values starts. Not
    np.r_[True, values[1:] != values[:-1]]: its index-tricks machinery was ~8 µs of the ~12 of
    a question's scan."""
    import numpy as np

    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return first


def run_lengths(starts, n: int):
    """Each run's length, from where each run starts (run_firsts' flatnonzero) among `n` values."""
    import numpy as np

    count = np.empty(len(starts), dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=count[:-1])
    count[-1:] = n - starts[-1:]
    return count


def copy_of(conn, fp: str, s) -> Copy:
    """The door's copy of slice `s` (index/slice.Slice) under fingerprint `fp`, made anew when the
    index changed since it was made."""
    import apsw

    with_, where, params = s.sql()
    key = ("copy", fp, with_, where, repr(sorted(params.items())))

    def make() -> Copy:
        memo = conn_memo(conn)
        copies = [k for k in memo if k[0] == "copy" and k != key]
        if len(copies) >= COPIES_MAX:
            for k in copies:
                del memo[k]
        found = conn.execute(
            f"{with_}SELECT c.vid, c.state, t.part, x.vec, v.key FROM cand c JOIN versions v ON v.id = c.vid "
            f"JOIN vtext t ON t.version_id = c.vid {PASSAGE_VECTOR} WHERE 1{where}",
            params | {"fp": fp}).fetchall()
        rows = sorted((r[:4] for r in found), key=lambda r: (r[0], r[2]))
        db = apsw.Connection(":memory:")
        load_vec(db)
        db.execute("CREATE TABLE p(vid INTEGER, state TEXT, part INTEGER, vec BLOB, PRIMARY KEY (vid, part)) WITHOUT ROWID")
        db.executemany("INSERT INTO p VALUES (?, ?, ?, ?)", rows)
        return Copy(db, rows, {r[0]: r[4] for r in found})

    return per_state(conn, key, make)


def scan(copy: Copy, qvec: bytes, bonus: float, best: float, penalty: float) -> dict | None:
    """{vid: (state, part, cos, meaning)} of every version of the copy, as semantic._version_score
    makes them (`bonus`, `best`, `penalty`: its constants), or None when a passage has no cosine (a
    zero vector: the caller's own path handles it)."""
    import numpy as np

    c = cosines(copy, qvec)
    if c is None:
        cos = [c for (c,) in copy.db.execute(_SCAN, (qvec,))]
        if None in cos:
            return None
        c = np.array(cos, dtype=np.float64)
    if not len(c):
        return {}
    if np.isnan(c).any():
        return None
    adj = c + copy.first * bonus
    a1 = np.maximum.reduceat(adj, copy.starts)  # each version's best passage
    at = np.flatnonzero(adj == a1[copy.group])
    at = at[run_firsts(copy.group[at])]  # the first (lowest part) of ties
    rest = adj.copy()
    rest[at] = -np.inf
    a2 = np.where(copy.multi, np.maximum.reduceat(rest, copy.starts), a1)  # its second best
    meaning = a1 * best + a2 * (1 - best) - penalty * copy.logs
    return dict(zip(copy.vids, zip(copy.states, copy.parts[at].tolist(), c[at].tolist(), meaning.tolist())))


_LAST: dict = {}    # fingerprint -> (kept arrays, ranking function) a door ranked that model by last
_PRIMED: dict = {}  # (fingerprint, question vector) -> (kept arrays, their ranking for it)


def offer(fp: str, known, rank) -> None:
    """The slice's kept arrays the answering thread ranks under `fp` now, and how (semantic._by_product):
    what the next question's vector under `fp` is ranked by as soon as it is made (prime)."""
    _LAST[fp] = (known, rank)
    from kyb_cli.core import embed

    embed.after_query_vector(prime)


def prime(fp: str, qvec: bytes) -> None:
    """On a model's worker thread, the question's vector just made: its ranking by the arrays
    under which `fp` was ranked last, kept for the answering thread (primed)."""
    from kyb_cli.core import embed

    last = _LAST.get(fp)
    if last is None or not embed.is_resident():  # only a door ranks by the matrix
        return
    known, rank = last
    if len(_PRIMED) >= 8:  # an answer that never came for them (another slice, a failure): start over
        _PRIMED.clear()
    _PRIMED[(fp, qvec)] = (known, rank(known, qvec))


def primed(fp: str, qvec: bytes, known):
    """The ranking prime made for this question under `fp` by these very arrays, else None."""
    got = _PRIMED.pop((fp, qvec), None)
    return got[1] if got is not None and got[0] is known else None


_BLAS: list = []  # [True] once numpy's OpenBLAS runs on one thread in this door, [False]: it cannot be told


def blas_one_thread() -> bool:
    """Whether a door's matrix product may be numpy's BLAS (sgemv): only once this process's OpenBLAS
    is told to run on one thread. On its threads the product split over both cores, and the threads
    then spun waiting for the next one, on the cores the two models' runs need (semantic._product);
    on one thread sgemv reads the 10k slice's 15 MB in ~1.2 ms where einsum took ~2.0 (from memory,
    load ~4). Without OpenBLAS's call (another BLAS, an older numpy): False, einsum as before."""
    if not _BLAS:
        _BLAS.append(_one_thread())
    return _BLAS[0]


def _one_thread() -> bool:
    import ctypes
    import glob
    import os

    import numpy as np

    for path in sorted(glob.glob(os.path.dirname(np.__file__) + ".libs/*openblas*.so*")):  # numpy's wheel's own
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: the same library
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(ctypes.c_int(1))
                return True
    return False

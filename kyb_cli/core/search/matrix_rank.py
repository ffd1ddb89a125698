"""A long-lived door's ranking of a large slice by one matrix product (semantic._approximate's arrays).

semantic.py keeps a large slice's passages per index state (their rows of the model's matrix,
grouped by version); a question is ranked by one product over them and each version's two best
passages, then the versions that can be in the top are scored exactly by sqlite-vec (kept_rows.py).
Moved out of semantic.py (its 500 lines): the product, the per-version reduction, and what the
kept arrays are made with for it. numpy only, imported when called (a door holds it).
"""

from __future__ import annotations


def product(sub, qvec: bytes):
    """Each passage's dot with the question (float64): BLAS on one thread (door_scan.blas_one_thread),
    else numpy's own loop (einsum), never BLAS on its threads, which spin on the cores the models need
    (10k keys, 2 cores: CPU an answer 53 -> 26 ms). Either rounding is far inside semantic.MARGIN."""
    import numpy as np

    from kyb_cli.core.search.door_scan import blas_one_thread

    q = np.frombuffer(qvec, dtype="<f4")
    return (sub @ q if blas_one_thread() else np.einsum("ij,j->i", sub, q)).astype(np.float64)


def by_product(known, qvec: bytes, best: float):
    """_approximate's answer from a slice's kept arrays `known` for one question: one product, then
    each version's two best passages (`best`: semantic.BEST_WEIGHT). Reads `known` only
    (door_scan.prime: a model's thread)."""
    import numpy as np

    from kyb_cli.core.search.door_scan import run_firsts

    uniq, (bonus, penalty, (rows, at, group, versions)), sub, starts, _group, _count, states, *_rest = known[1]
    adj = product(sub, qvec)  # a new float64 array: added to in place
    adj += bonus
    # Each version's best passage and second best (one passage: itself), reduced over the versions
    # of several passages alone: the same maxima of the same doubles (tests/test_by_product.py).
    # 10k keys: 124 of 9775 versions hold more than one passage, and reducing every version cost
    # ~0.6 ms a product against ~0.1.
    a1 = adj[starts]
    a2 = a1.copy()
    if len(versions):
        several = adj[rows]
        m1 = np.maximum.reduceat(several, at)
        best_at = np.flatnonzero(several == m1[group])
        best_at = best_at[run_firsts(group[best_at])]  # one per version
        several[best_at] = -np.inf
        a1[versions], a2[versions] = m1, np.maximum.reduceat(several, at)
    return uniq, a1 * best + a2 * (1 - best) - penalty, states, known[1]


def several(starts, count):
    """(rows, their versions' starts among them, each row's version among them, those versions)
    of the versions of more than one passage: by_product reduces those alone."""
    import numpy as np

    versions = np.flatnonzero(count > 1)
    rows = (np.concatenate([np.arange(a, a + c) for a, c in zip(starts[versions].tolist(), count[versions].tolist())])
            if len(versions) else np.zeros(0, dtype=np.int64))
    at = np.r_[0, np.cumsum(count[versions])[:-1]].astype(np.int64) if len(versions) else rows
    return rows, at, np.repeat(np.arange(len(versions)), count[versions]), versions


def rows_by_version(uniq, starts, count, parts) -> tuple:
    """({vid: its version's place}, and as Python lists each version's first row and number of rows,
    each row's part): kept_rows finds a version's rows by these, not by numpy scalars (10k keys:
    ~0.15 ms a call of an answer's ~7 against ~0.03), made with the slice in ~1 ms."""
    return dict(zip(uniq.tolist(), range(len(uniq)))), starts.tolist(), count.tolist(), parts.tolist()


def held_at(vids, only: list[int]):
    """Where the versions of `only` stand among the sorted, distinct `vids` (those it holds, in vid
    order, once each: what np.isin(vids, only)'s mask keeps), found by searchsorted, not np.isin over
    every vid (10k keys: ~0.1 ms of the English route's second ask)."""
    import numpy as np

    want = np.fromiter((int(v) for v in only), dtype=np.int64)
    at = np.searchsorted(vids, want)
    inside = at < len(vids)
    at, want = at[inside], want[inside]
    return np.unique(at[vids[at] == want])

"""A long-lived door's ranking of a large slice by one matrix product (semantic._approximate's arrays).

semantic.py keeps a large slice's passages per index state (their rows of the model's matrix,
grouped by version); a question is ranked by one product over them and each version's two best
passages, then the versions that can be in the top are scored exactly by sqlite-vec (kept_rows.py).
Moved out of semantic.py (its 500 lines): the product, the per-version reduction, and what the
kept arrays are made with for it. numpy only, imported when called (a door holds it).
"""

from __future__ import annotations


class SliceArrays:
    """A large slice's kept arrays (semantic._approximate, per model and index state), sorted by
    version: `versions` (each version's id), `fixed` (each passage's first-passage bonus, each
    version's length penalty, `several` of the versions of more than one passage), `sub` (each
    passage's row of the model's matrix), `starts`/`group`/`count` (each version's first passage,
    each passage's version, each version's passages), `states` ({vid: state}), `parts` (each
    passage's part), `keys` ({vid: key} asked so far: semantic._kept_keys fills it) and `by_version`
    (rows_by_version's look-ups, for kept_rows). Read only once made, but for `keys`."""

    __slots__ = ("versions", "fixed", "sub", "starts", "group", "count", "states", "parts", "keys", "by_version")

    def __init__(self, versions, fixed, sub, starts, group, count, states: dict, parts, keys: dict,
                 by_version: tuple) -> None:
        self.versions, self.fixed, self.sub = versions, fixed, sub
        self.starts, self.group, self.count = starts, group, count
        self.states, self.parts, self.keys, self.by_version = states, parts, keys, by_version


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

    kept = known[1]
    bonus, penalty, (rows, at, group, versions) = kept.fixed
    starts = kept.starts
    adj = product(kept.sub, qvec)  # a new float64 array: added to in place
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
    return kept.versions, a1 * best + a2 * (1 - best) - penalty, kept.states, kept


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

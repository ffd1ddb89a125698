"""semantic._by_product (matrix_rank.by_product) reduces only the versions of several passages (most
versions have one): its ranking must be the very doubles of the reduction over every version it
replaced (below, as it was), with ties between a version's passages and versions of one, two and
many passages."""

from __future__ import annotations

import numpy as np
import pytest

from kyb_cli.core.search import matrix_rank, semantic


def _every_version(known, qvec: bytes):
    """The reduction as it was: every version's best and second best passage by reduceat."""
    kept = known[1]
    (bonus, penalty, _multi), sub, starts, group, count = kept.fixed, kept.sub, kept.starts, kept.group, kept.count
    adj = semantic._product(sub, qvec)
    adj += bonus
    a1 = np.maximum.reduceat(adj, starts)
    best_at = np.flatnonzero(adj == a1[group])
    best_at = best_at[np.r_[True, group[best_at][1:] != group[best_at][:-1]]]
    rest = adj.copy()
    rest[best_at] = -np.inf
    a2 = np.where(count > 1, np.maximum.reduceat(rest, starts), a1)
    return a1 * semantic.BEST_WEIGHT + a2 * (1 - semantic.BEST_WEIGHT) - penalty


def _known(rng, counts: list[int]):
    count = np.array(counts, dtype=np.int64)
    vid = np.repeat(np.arange(len(count), dtype=np.int64) * 2 + 5, count)
    part = np.concatenate([np.arange(c) for c in count]).astype(np.int64)
    sub = rng.standard_normal((len(vid), 384)).astype("<f4")
    sub /= np.linalg.norm(sub, axis=1, keepdims=True)
    for i in range(1, len(vid)):
        if vid[i] == vid[i - 1] and rng.random() < 0.2:
            sub[i] = sub[i - 1]  # a tie between a version's passages
    new = np.r_[True, vid[1:] != vid[:-1]]
    starts, group = np.flatnonzero(new), np.cumsum(new) - 1
    fixed = ((part == 0) * semantic.FIRST_PASSAGE_BONUS, semantic.LENGTH_PENALTY * np.log(count),
             matrix_rank.several(starts, count))
    return ("state", matrix_rank.SliceArrays(vid[starts], fixed, sub, starts, group, count, {}, part, {}, ()))


@pytest.mark.parametrize("counts", [[1], [2], [1, 1, 1], [3, 1, 2, 1, 1, 4], "random"])
def test_several_passages_alone_give_the_same_doubles(counts):
    rng = np.random.default_rng(3)
    if counts == "random":
        counts = [1 if rng.random() < 0.9 else int(rng.integers(2, 6)) for _ in range(500)]
    known = _known(rng, counts)
    for _ in range(10):
        q = rng.standard_normal(384).astype("<f4")
        q /= np.linalg.norm(q)
        got = semantic._by_product(known, q.tobytes())[1]
        assert got.tobytes() == _every_version(known, q.tobytes()).tobytes()


def test_only_by_searchsorted_keeps_what_isin_kept():
    """matrix_rank.held_at: the versions of `only` (semantic._exact_of_nearest's) among the sorted
    slice, as np.isin's mask keeps them."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        vids = np.unique(rng.integers(0, 200, size=int(rng.integers(0, 80))))
        only = rng.integers(-5, 210, size=int(rng.integers(0, 30))).tolist()
        want = vids[np.isin(vids, np.array(only, dtype=np.int64))]
        assert np.array_equal(vids[matrix_rank.held_at(vids, only)], want)

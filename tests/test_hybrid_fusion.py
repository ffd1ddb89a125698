"""Fusion rules (rule "hybrid fusion"): meaning + how far a hit's words stand out, identifiers first,
lexical order kept without vectors, ties by lexical rank then key."""

from __future__ import annotations

import pytest

from kyb_cli.core.search.fusion import MIN_CANDIDATES, WORDS_WEIGHT, candidates, fuse, typical, words_part


def order(fused):
    return [ident for ident, _lr, _vr, _score in fused]


def test_fusion_admits_semantic_only_candidate():
    fused = fuse(["a", "b"], ["c"], {"c": 0.9, "a": 0.7, "b": 0.7}, cover={"a": 0.5, "b": 0.5})
    assert order(fused)[0] == "c"
    _ident, lexical_rank, vector_rank, _score = fused[0]
    assert lexical_rank is None and vector_rank == 1


def test_fusion_keeps_lexical_only_hits():
    """A lexical hit without a vector yet (pending) is placed as the weakest meaning, by its words."""
    fused = order(fuse(["exact"], ["s1", "s2", "s3"], {"s1": 0.9, "s2": 0.85, "s3": 0.8},
                       cover={"exact": 1.0, "s1": 0.0, "s2": 0.0, "s3": 0.0}))
    assert fused == ["s1", "s2", "exact", "s3"]  # 0.8 + 0.04 * (1 - 0) beats s3's 0.8 alone


def test_fusion_without_semantics_preserves_lexical_order():
    lexical = ["z", "a", "m", "b"]
    assert order(fuse(lexical, None)) == lexical
    assert order(fuse(lexical, [], {})) == lexical
    assert order(fuse(lexical, [], {}, cover={"b": 1.0, "z": 0.1})) == lexical


def test_words_count_by_how_far_a_hit_stands_out():
    """Close meanings: the hit holding the question's words where others do not goes first; when
    every candidate holds the same share, the words lift none of them."""
    meaning = {"a": 0.86, "b": 0.85, "c": 0.84, "d": 0.83}
    assert order(fuse(["b"], ["a", "b", "c", "d"], meaning, cover={"a": 0.1, "b": 0.9, "c": 0.1, "d": 0.1}))[0] == "b"
    same = {k: 0.6 for k in meaning}
    assert order(fuse(["b", "a", "c", "d"], ["a", "b", "c", "d"], meaning, cover=same)) == ["a", "b", "c", "d"]
    # a far meaning is not rescued by words: 0.04 at most
    far = {"a": 0.90, "b": 0.80}
    assert order(fuse(["b"], ["a", "b"], far, cover={"a": 0.0, "b": 1.0})) == ["a", "b"]


def test_typical_is_the_upper_quartile_and_words_part_is_bounded():
    assert typical([]) == 0.0
    assert typical([1.0, 0.0, 0.0, 0.0]) == 0.0
    assert typical([0.9, 0.8, 0.7, 0.6, 0.1, 0.0, 0.0, 0.0]) == 0.7
    assert words_part(1.0, 0.0) == pytest.approx(WORDS_WEIGHT)
    assert words_part(0.3, 0.5) == 0.0
    assert words_part(7.0, 0.0) == pytest.approx(WORDS_WEIGHT)


def test_equal_scores_are_ordered_by_lexical_rank_then_key():
    meaning = {"a": 0.8, "b": 0.8, "c": 0.8}
    assert order(fuse(["c", "b"], ["a", "b", "c"], meaning, cover={"a": 0, "b": 0, "c": 0})) == ["c", "b", "a"]
    assert order(fuse([], ["b", "a"], {"a": 0.8, "b": 0.8})) == ["a", "b"]


def test_candidates_at_least_24():
    assert MIN_CANDIDATES == 24 and candidates(5) == 24 and candidates(50) == 50


def test_identifier_hits_lead_in_lexical_order_whatever_the_vectors_say():
    semantic = [f"s{i}" for i in range(30)]
    meaning = {s: 0.9 - i / 100 for i, s in enumerate(semantic)} | {"id-1": 0.5}
    fused = order(fuse(["id-2", "id-1", "other"], semantic + ["id-1"], meaning, first={"id-1", "id-2"}))
    assert fused[:2] == ["id-2", "id-1"]


def _reference(lexical, semantic, meaning, cover, first, tie, weight=WORDS_WEIGHT):
    """fuse as it was written before its rows (an object per candidate, sorted by a key function)."""
    lrank = {i: r for r, i in enumerate(lexical, 1)}
    vrank: dict = {}
    for r, i in enumerate(semantic, 1):
        vrank.setdefault(i, r)
    idents = list(dict.fromkeys([*lexical, *semantic]))
    if not any(i in meaning for i in idents):
        return [(i, lrank.get(i), vrank.get(i), 0.0)
                for i in sorted(idents, key=lambda i: (lrank.get(i, len(lrank) + 1), tie.get(i, (str(i),))))]
    weakest = min((meaning[i] for i in semantic if i in meaning), default=min(meaning.values()))
    held = {i: cover.get(i, 1.0 if i in lrank else 0.0) for i in idents}
    usual = typical(list(held.values()))
    out = [(i, lrank.get(i), vrank.get(i), meaning.get(i, weakest) + words_part(held[i], usual, weight))
           for i in idents]
    nowhere = len(lrank) + 1
    return sorted(out, key=lambda f: ((0, f[1]) if f[0] in first and f[1] is not None else (1, 0),
                                      -round(f[3], 12), f[1] or nowhere, tie.get(f[0], (str(f[0]),))))


def test_fuse_gives_the_reference_order_and_doubles():
    """fuse (rows, each sort key made in one loop) gives the order and the very doubles of the
    reference, ties, leads, a missing cover, coverage past 1 and no vectors included."""
    import random

    rng = random.Random(38)
    for _ in range(400):
        names = [f"k{n}" for n in range(rng.randint(0, 30))]
        lexical = rng.sample(names, rng.randint(0, len(names)))
        semantic = [rng.choice(names) for _ in range(rng.randint(0, len(names)))] if names else []
        scores = [0.5, 0.7, 0.7000000000001, 0.9]
        meaning = {i: rng.choice(scores) for i in names if rng.random() < 0.7} if rng.random() < 0.9 else {}
        cover = {i: rng.choice([0.0, 0.25, 0.5, 1.0, 1.2]) for i in names if rng.random() < 0.8}
        first = {i for i in names if rng.random() < 0.1}
        tie = {i: (i, -n) for n, i in enumerate(names) if rng.random() < 0.8}
        weight = rng.choice([WORDS_WEIGHT, 0.1])
        if not meaning and semantic:
            semantic = []
        got = fuse(lexical, semantic, meaning, cover, first, tie, weight)
        want = _reference(lexical, semantic, meaning, cover, first, tie, weight)
        assert [(i, lr, vr, repr(s)) for i, lr, vr, s in got] == [(i, lr, vr, repr(s)) for i, lr, vr, s in want]


def test_words_part_is_the_max_min_formula_to_the_bit():
    """words_part's comparisons give max(0, min(1, cover) - usual) * weight's very doubles."""
    values = [0.0, -0.0, 1.0, 1.5, 0.3, float("nan"), 0.25, float("inf"), -float("inf"), 0.7, 1e-300]
    for c in values:
        for u in values:
            for w in (WORDS_WEIGHT, 0.1):
                assert repr(words_part(c, u, w)) == repr(w * max(0.0, min(1.0, c) - u))

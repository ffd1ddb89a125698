"""Reciprocal rank fusion of the lexical (BM25) list and the vector list (rule "hybrid fusion").

score(item) = Σ_lexical W_LEX/(K + rank) + Σ_semantic W_SEM/(K + rank), ranks 1-based; an item in
one list only still scores, so a meaning-only match enters and an exact-word-only match survives.
Sorted by score descending, ties by key ascending (then newest version first). Pure and tiny:
no numpy, no I/O. K and the weights are the original's; change them only on measured evidence
(bench/eval_search.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

K = 60.0
W_LEX = 0.4
W_SEM = 0.6
MIN_CANDIDATES = 24  # each side contributes max(limit, 24) candidates


def candidates(limit: int) -> int:
    return max(int(limit), MIN_CANDIDATES)


@dataclass
class Fused:
    ident: Hashable
    score: float
    lexical_rank: int | None
    vector_rank: int | None


def rrf(lexical: list[Hashable], semantic: list[Hashable] | None, tie: dict[Hashable, tuple] | None = None,
        k: float = K, w_lex: float = W_LEX, w_sem: float = W_SEM) -> list[Fused]:
    """Fuse two ranked lists of identities; `tie[ident]` orders equal scores (default: the ident)."""
    out: dict[Hashable, Fused] = {}
    for rank, ident in enumerate(lexical, 1):
        if ident not in out:
            out[ident] = Fused(ident, w_lex / (k + rank), rank, None)
    for rank, ident in enumerate(semantic or [], 1):
        f = out.setdefault(ident, Fused(ident, 0.0, None, None))
        if f.vector_rank is None:
            f.vector_rank = rank
            f.score += w_sem / (k + rank)
    tie = tie or {}
    return sorted(out.values(), key=lambda f: (-round(f.score, 12), tie.get(f.ident, (str(f.ident),))))

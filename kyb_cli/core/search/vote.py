"""The third, multilingual vote (issue 41): a question the router does not call English
(search/route.py) is also ranked by Google's multilingual Universal Sentence Encoder (core/embed/
models.py USE), and the answer's top is the hybrid top fused with USE's top by reciprocal rank.

Why a rank vote and not a third score: USE alone is weaker than e5's hybrid (dev set cross-language
top-3 0.87 against 0.95) but ranks first two of the three questions e5 misses; a rank fusion lets it
lift those without reweighing every close score. Ranking only: `strength` and `confident` stay e5's
(the hits keep e5's calibrated score; a hit only USE found is read with e5's score of it), except
that with several phrasings a hit must be USE's first (FIRST, search/phrasings.py) to be vouched for.
"""

from __future__ import annotations

# Chosen on the fit half of the dev set's cross-language questions, in the product (docs/SEARCH.md "The
# multilingual vote in the product", the grid k in {1, 5, 10, 20, 60} x weight in {0.1 .. 1}): the best
# fit top-1 (ties: top-3, then MRR) is 26 / 27, 27 / 27, 0.981, reached by k 5 w 0.25 and by w 0.1 at
# k 10, 20, 60; of those, k 5 w 0.25 changes the fewest constants (K was 5, WEIGHT 0.5). Check half:
# top-1 19 / 28, top-3 26 / 28 at both weights (MRR 0.798 against 0.802); all 55: top-1 44 -> 45,
# top-3 53 (0.964, issue 26's 0.95; 52 without the vote); no question ranks lower than without the vote.
K = 5
WEIGHT = 0.25
DEPTH = 10
# The key USE ranks first for this phrasing, kept in the phrasing's own answer for the fusion of
# phrasings (search/phrasings.py fuse_answers) and never shown (pipeline._response takes it out).
FIRST = "_vote_first"


def voter(text: str):
    """The registry's model for questions not in English, when the router says `text` is not, else None."""
    from kyb_cli.core.embed.models import MODELS
    from kyb_cli.core.search.route import is_english
    from kyb_cli.core.settings import env_off

    spec = next((m for m in MODELS if m.languages == "other"), None)
    if spec is None or env_off(spec.env):  # switched off: no vote, and nothing to say about it
        return None
    return spec if not is_english(text) else None


def fused(first: list, second: list, k: int = K, weight: float = WEIGHT) -> list:
    """`first` and `second` (identities, best first) fused by reciprocal rank; ties keep `first`'s order."""
    score: dict = {}
    for i, ident in enumerate(first):
        score[ident] = score.get(ident, 0.0) + 1 / (k + i + 1)
    for i, ident in enumerate(second):
        score[ident] = score.get(ident, 0.0) + weight / (k + i + 1)
    return sorted(score, key=lambda ident: -score[ident])  # stable: first's order, then second's


def side(conn, text: str, sl, plan, base, spec, given: tuple, out: dict):
    """USE's top DEPTH over the slice, kept on e5's side (`base.vote`); without USE vectors the answer
    names it in `semantic_missing` and the order is e5's hybrid alone. The hits USE found that e5's side
    did not rank get e5's Near (its calibrated score), so grading reads e5 for every hit.
    Returns (side, USE's pending count): USE's lag never makes e5's answer partial."""
    from kyb_cli.core.search.semantic import nearest, semantic_side

    use = semantic_side(conn, text, sl, DEPTH, require=plan.require, exclude=plan.exclude, spec=spec,
                        given=given, scored=False)
    if use.ranked is None:
        out["semantic_missing"] = {spec.name: use.reason}
        return base, 0
    if not use.ranked:
        return base, use.pending
    out[FIRST] = use.ranked[0].key
    known = {x.vid for x in base.ranked}
    need = [x.vid for x in use.ranked if x.vid not in known]
    extra = {}
    if need and base.qvec is not None and base.fingerprint is not None:
        extra = {x.vid: x for x in nearest(conn, base.qvec, base.fingerprint, sl, len(need),
                                              centre=base.centre, only=need)}
    e5 = {x.vid: x for x in base.ranked} | extra
    # a hit without an e5 vector yet keeps USE's cosine and no calibrated score (as the English side's)
    vote = [e5.get(x.vid) or x._replace(score=None) for x in use.ranked]
    return _with_vote(base, vote), use.pending


def _with_vote(base, vote: list):
    from kyb_cli.core.search.semantic import SemanticSide

    return SemanticSide(base.ranked, base.pending, base.reason, base.calibration, base.qvec, base.fingerprint,
                        base.meanings, base.centre, vote)


def reorder(order: list[tuple], sem: dict, vote: list, ident, leads: set = frozenset()) -> list[tuple]:
    """The fused order's top DEPTH fused with the vote (search/vote.fused), then the rest as it was.
    The hits that lead the answer (`leads`: an identifier found whole, a decisive word match) keep
    their places ahead of it: a vote on meaning never moves an exact match down. `sem` gains the
    vote's hits it lacked (so the answer can read them); `ident(near)` -> identity."""
    lead = [row for row in order if row[0] in leads]
    order = [row for row in order if row[0] not in leads]
    rows = {row[0]: row for row in order}
    voted = []
    for near in vote:
        i = ident(near)
        if i in leads:
            continue
        if i not in rows:  # a candidate already ranked keeps how it was read (its grade is unchanged)
            sem.setdefault(i, near)
        voted.append(i)
    head = [row[0] for row in order[:DEPTH]]
    top = fused(head, voted, K, WEIGHT)
    new = [rows.get(i, (i, None, None, None)) for i in top]
    seen = set(top)
    return lead + new + [row for row in order[DEPTH:] if row[0] not in seen]

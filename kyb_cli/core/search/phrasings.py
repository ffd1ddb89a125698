"""Several phrasings of one question, fused into one answer with one `confident`.

An agent that calls kyb can rephrase its question for free (other words, the records' language,
an identifier it suspects): `kyb query Q --also Q2 --also Q3`, MCP and HTTP `also`. Each phrasing is
searched exactly as a question alone (its own lexical side, vector sides, fusion and grading); the
answers are then fused by reciprocal rank (RRF, k = RRF_K): a record that several phrasings put
near the top comes first. Ranks, not scores: each phrasing's scores sit on its own level.

Phrasings find; the question as asked vouches. A hit the original question also found is the
original's hit (its `strength`, `found_by`, snippet); a hit only another phrasing found keeps that
phrasing's fields but is `weak`. So `confident` is the original question's judgement over the fused
order: each extra phrasing would otherwise be one more chance for a question about nothing stored
to look strong somewhere. On the dev set (bench/exp_phrasings.py, docs/SEARCH.md "Several
phrasings"), letting the phrasing that ranked a hit best grade it gave off-topic `confident: false`
0.79 (on-topic `confident: true` 0.99); the original's grading 0.94 (on-topic 0.90). The answer's other fields
(`semantic`, `pending_vectors`, `semantic_off`, `semantic_missing`) are the original question's;
`phrasings` says how many were fused. Measured on the dev set with rephrasings written before
measuring (bench/evalset/also.jsonl, docs/SEARCH.md "Several phrasings").
"""

from __future__ import annotations

from kyb_cli.core.errors import UsageError

MAX_PHRASINGS = 8  # the question and at most 7 others
RRF_K = 60


def checked(text: str, also) -> list[str]:
    """The question, then each other phrasing that has text (blank ones dropped); UsageError past
    MAX_PHRASINGS or when a phrasing is not text."""
    others = []
    for q in also or ():
        if not isinstance(q, str):
            raise UsageError("also: each phrasing must be text")
        if q.strip():
            others.append(q)
    if 1 + len(others) > MAX_PHRASINGS:
        raise UsageError(f"also: at most {MAX_PHRASINGS - 1} other phrasings (got {len(others)})")
    return [text, *others]


def _ident(mode: str, hit: dict):
    return (hit["key"], hit.get("sha")) if mode == "history" else hit["key"]


def fuse_answers(answers: list[tuple[list[dict], dict]], mode: str) -> tuple[list[dict], dict]:
    """One (hits, out) from each phrasing's (hits, out), the first being the original question's."""
    score: dict = {}
    best: dict = {}
    for q, (hits, _out) in enumerate(answers):
        for rank, hit in enumerate(hits, 1):
            i = _ident(mode, hit)
            score[i] = score.get(i, 0.0) + 1.0 / (RRF_K + rank)
            held = best.get(i)
            if held is None or rank < held[0]:
                best[i] = (rank, q, hit)
    order = sorted(score, key=lambda i: (-score[i], best[i][0], str(i)))
    original = {_ident(mode, hit): hit for hit in answers[0][0]}
    hits = []
    for i in order:
        hit = original.get(i)
        if hit is None:  # found by another phrasing only: it ranks, it does not vouch
            hit = best[i][2]
            hit["strength"] = "weak"
        hits.append(hit)
    out = dict(answers[0][1])
    out["phrasings"] = len(answers)
    return hits, out

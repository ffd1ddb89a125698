"""Several phrasings of one question, fused into one answer with one `confident`.

An agent that calls kyb can rephrase its question for free (other words, the records' language,
an identifier it suspects): `kyb query Q --also Q2 --also Q3`, MCP and HTTP `also`. Each phrasing is
searched exactly as a question alone (its own lexical side, vector sides, fusion and grading); the
answers are then fused by reciprocal rank (RRF, k = RRF_K): a record that several phrasings put
near the top comes first. Ranks, not scores: each phrasing's scores sit on its own level.
k is 1, not the usual 60: each phrasing is a whole hybrid answer, and one of them is often much
better than the other (a rephrasing naming the record's terms). With k = 60 a record ranked 2nd and
3rd by both outranked one ranked 1st by one phrasing and missed by the other (1/62 + 1/63 against
1/61); with k = 1 every phrasing's first hit stays in the top two and agreement breaks the rest.
Dev set, `--also` with bench/evalset/also.jsonl (issue 41, sixth session, docs/SEARCH.md), paraphrase
top-3 fit / check: k 60 0.81 / 0.88, 10 0.85 / 0.91, 3 0.92 / 0.98, 1 0.96 / 0.98 (top-1 0.62 ->
0.75 over all); cross-language 54 -> 55 of 55; `confident` unchanged (it reads each phrasing's ranks).

The phrasings vouch together, and the answer is the same in any order (Q --also R == R --also Q:
issue 41 found one order `weak`, the other `strong`, for the same record). A fused hit is strong
when every phrasing grades it strong, or one does and every phrasing ranks it in its first
AGREE_RANK; a hit some phrasing did not find at all is weak. Each extra phrasing graded on its own
would be one more chance for a question about nothing stored to look strong somewhere. Replayed on
the dev set's 212 questions with a rephrasing (bench/exp_phrasings.py, docs/SEARCH.md "Several
phrasings"), on-topic `confident: true` / off-topic `confident: false`, fit half: the question as
asked vouching (before, not symmetric) 0.82 / 0.86, every phrasing 0.75 / 0.86, this rule 0.90 /
0.86; check half 0.74 / 0.88, 0.66 / 0.92, 0.87 / 0.85. The answer's other fields (`semantic`,
`pending_vectors`, `semantic_off`, `semantic_missing`) are merged the same way (_merged);
`phrasings` says how many were fused. Rephrasings written before measuring: bench/evalset/also.jsonl.
"""

from __future__ import annotations

from kyb_cli.core.errors import UsageError

MAX_PHRASINGS = 8  # the question and at most 7 others
RRF_K = 1  # see above: each phrasing's first hit stays in the fused top two
AGREE_RANK = 2  # ... or one grades it strong and every phrasing ranks it this high (fuse_answers)
# The vote (_VOTE, issue 41, the last points): when a phrasing is not in English, the multilingual vote (USE,
# search/vote.py) must rank the hit first for it. Two models agreeing: a question about nothing
# stored ("how to set up Jenkins to build an Android app", in Russian) was vouched for, through its
# English rephrasing, for a record USE does not rank near the question as asked (an Argo runbook).
# Replayed on the dev set (bench/exp_use_agree.py), off-topic `confident: false` / on-topic
# `confident: true` with one rephrasing: fit 19 -> 20 / 21, 198 -> 195 / 207 (USE's top 1 is the
# only depth that moved the fit half: top 2..10 kept 19); check 23 -> 24 / 26, 212 -> 207 / 230;
# all 42 -> 44 / 47 (0.936), 410 -> 402 / 437 (0.920).


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


def fuse_answers(answers: list[tuple[list[dict], dict]], mode: str, texts: list[str] | None = None,
                 firsts: list | None = None) -> tuple[list[dict], dict]:
    """One (hits, out) from each phrasing's (hits, out) (`texts`: the phrasings, in the same order),
    the same whatever their order.

    Order: RRF over the phrasings (ties: the best rank any phrasing gave, then the identity). A hit
    is strong when the phrasings agree on it: every one grades it strong, or one does and every one
    ranks it within AGREE_RANK. So a question about nothing stored, asked twice, does not get two
    chances to look strong somewhere, and a vague question whose rephrasing names the record's
    terms is confident when both put the record on top. `firsts`: per phrasing, the key the
    multilingual vote ranks first (search/vote.py; None where it did not vote): when any voted, a hit
    is strong only when it is the key every vote ranks first (_VOTE above). The hit shown is the one
    the best-ranking phrasing graded (among those that found it strong, when it is strong; ties:
    the phrasing's text)."""
    score: dict = {}
    seen: dict = {}  # ident -> [(rank, text, hit)] one per phrasing that found it
    texts = list(texts) if texts is not None else [str(k) for k in range(len(answers))]
    for (hits, _out), text in zip(answers, texts):
        for rank, hit in enumerate(hits, 1):
            i = _ident(mode, hit)
            if any(t == text for _r, t, _h in seen.get(i, ())):
                continue
            score[i] = score.get(i, 0.0) + 1.0 / (RRF_K + rank)
            seen.setdefault(i, []).append((rank, text, hit))
    best = {i: min(found, key=lambda f: (f[0], f[1]))[0] for i, found in seen.items()}
    order = sorted(score, key=lambda i: (-score[i], best[i], str(i)))
    n = len(set(texts))  # a phrasing given twice counts once
    voted = {k for k in firsts or () if k is not None}  # _VOTE above
    hits = []
    for i in order:
        found = sorted(seen[i], key=lambda f: (f[0], f[1]))
        vouch = [f for f in found if f[2]["strength"] == "strong"]
        near = len(found) == n and all(r <= AGREE_RANK for r, _t, _h in found)
        hit = (vouch or found)[0][2]
        strong = (len(vouch) == n or (vouch and near)) and (not voted or voted == {hit["key"]})
        hit["strength"] = "strong" if strong else "weak"
        hits.append(hit)
    return hits, _merged([out for _h, out in answers], texts, len(answers))


def _merged(outs: list[dict], texts: list, n: int) -> dict:
    """The answer's own fields, the same in any order: vectors ran when they ran for a phrasing,
    pending is the most any phrasing saw, other fields from the first phrasing by text."""
    merged: dict = {}
    for _t, out in sorted(zip(texts, outs), key=lambda x: str(x[0])):
        for k, v in out.items():
            merged.setdefault(k, v)
    merged["semantic"] = any(out.get("semantic") for out in outs)
    pending = [out["pending_vectors"] for out in outs if "pending_vectors" in out]
    if pending:
        merged["pending_vectors"] = max(pending)
    merged["phrasings"] = n
    return merged

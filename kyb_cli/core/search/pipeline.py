"""THE query pipeline: bring the index to HEAD, search one slice lexically and by meaning, fuse, shape.

Every door runs it through `kyb_cli.api.query` (time arguments -> slice -> lexical + vectors -> fusion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kyb_cli.core.index import schema
from kyb_cli.core.index.fresh import Fresh, with_index
from kyb_cli.core.search.lexical import lexical
from kyb_cli.core.search.slice import Filters


def search(store_path: Path, text: str = "", *, mode: str = "current", as_of: int | None = None,
           window: tuple[int, int] | None = None, filters: Filters | None = None, limit: int = 10,
           recent: bool = False, semantic: bool = False, explain: bool = False,
           as_of_event: int | None = None, min_strength: str | None = None,
           also: list[str] | tuple[str, ...] = ()) -> dict:
    """The response `{count, hits, confident, semantic, mode, head}` (+ `pending_vectors` when vectors ran).

    The question's operators (search/syntax.py) hold on both sides. With `semantic`, a question with
    a positive word and no `--recent`, the vector side runs in every time mode on the same slice,
    filters and operators, and is fused with BM25. When it cannot run, the answer is lexical with
    `semantic: false` and `semantic_off` holds the one-line reason (the CLI prints it). Each hit is
    graded (`strength`, `found_by`, search/relevance.py) and carries a `snippet`; `confident` is true
    when one hit is strong; `min_strength="strong"` keeps strong hits only. `also`: other phrasings
    of the same question, each searched the same way and fused into one answer (search/phrasings.py).
    """
    from kyb_cli.core.search.phrasings import checked, fuse_answers

    phrasings = checked(text, also)
    strong_only = min_strength == "strong"

    def run(f: Fresh) -> dict:
        answers = [one(f, q) for q in phrasings]
        hits, out = fuse_answers(answers, mode) if len(answers) > 1 else answers[0]
        if strong_only:
            hits = [h for h in hits if h["strength"] == "strong"]
        hits = hits[:limit]
        for h in hits:  # only the hits returned are snipped (a hybrid answer grades ~50 candidates)
            h["snippet"] = _snippet(h.get("body", ""), *h.pop(_SNIPPET_OF))
        confident = any(h["strength"] == "strong" for h in hits)
        response = {"count": len(hits), "hits": hits, "confident": confident, **out, "mode": mode, "head": f.head}
        if not f.history_complete:
            response["history_complete"] = False
        return response

    def one(f: Fresh, text: str) -> tuple[list[dict], dict]:
        """One phrasing's graded hits (every candidate, best first) and what the answer says about it."""
        from kyb_cli.core.search.syntax import query_plan
        from kyb_cli.core.search.tokens import words

        parsed, plan = query_plan(text)
        hybrid = semantic and not recent and bool(words(parsed.positive_text))
        n = fusion_candidates(limit) if (hybrid or strong_only or len(phrasings) > 1) else limit
        ranked = lexical(f.conn, text, mode=mode, as_of=as_of, window=window, filters=filters,
                         limit=n, recent=recent, as_of_event=as_of_event)
        out: dict = {"semantic": False}
        side = None
        if hybrid:
            from kyb_cli.core.search.slice import Slice
            from kyb_cli.core.search.vectors import semantic_side

            sl = Slice(mode, as_of, window, filters or Filters(), as_of_event)
            side = semantic_side(f.conn, parsed.positive_text, sl, n, require=plan.require, exclude=plan.exclude)
            if side.ranked is not None:
                out.update(semantic=True, pending_vectors=side.pending)
                side = _english_side(f.conn, parsed.positive_text, sl, n, plan, side, ranked, out)
                if side.pending:  # never embedded here: the background filler does it
                    from kyb_cli.core.index import staged

                    staged.start_filler(f.store_path, f.git_dir)
            else:
                out["semantic_off"] = side.reason
                side = None
        by_vectors = side is not None and vectors_only()
        if by_vectors:
            out["ranking"] = "vectors"
        return _answer(f.conn, mode, text, parsed, plan, ranked, side, explain,
                       vector_order if by_vectors else None), out

    response = with_index(store_path, run, history=mode != "current")  # the past waits (staged)
    if mode == "as_of_event" and as_of_event is not None:
        from kyb_cli.core.times.format import rfc3339

        response["as_of_event"] = rfc3339(as_of_event)
        if as_of is not None:
            response["as_of"] = rfc3339(as_of)
    elif mode == "as_of" and as_of is not None:
        from kyb_cli.core.times.format import rfc3339

        response["as_of"] = rfc3339(as_of)
    elif mode == "changed_between" and window is not None:
        from kyb_cli.core.times.format import rfc3339

        response["window"] = [rfc3339(window[0]), rfc3339(window[1])]
    return response


def _english_side(conn, text: str, sl, n: int, plan, side, ranked, out: dict):
    """An English question is ranked by e5 and the English model fused (search/route.py); without
    that model the answer says so in `semantic_missing` ({model: reason}) and e5 ranks alone."""
    from kyb_cli.core.embed.models import MODELS
    from kyb_cli.core.search.route import combine, is_english
    from kyb_cli.core.search.vectors import semantic_side

    spec = next((m for m in MODELS if m.languages == "en"), None)
    if spec is None or not is_english(text):
        return side
    english = semantic_side(conn, text, sl, n, require=plan.require, exclude=plan.exclude, spec=spec)
    if english.ranked is None:
        out["semantic_missing"] = {spec.name: english.reason}
        return side
    return combine(conn, side, english, sl, [vid for vid, _h in ranked])


def vectors_only() -> bool:
    """KYB_SEARCH_RANKING=vectors: rank hybrid queries by the vector side alone (the dev set's
    "vectors only" column); the response then says `"ranking": "vectors"`. Not for users."""
    import os

    return os.environ.get("KYB_SEARCH_RANKING", "").strip().lower() == "vectors"


def fusion_candidates(limit: int) -> int:
    from kyb_cli.core.search.fusion import candidates

    return candidates(limit)


def vector_order(lex: dict, sem: dict) -> list[tuple]:
    """The bench's ordering (KYB_SEARCH_RANKING=vectors): the vector side's order alone."""
    return [(i, None, r, None) for r, i in enumerate(sem, 1)]


def _answer(conn, mode: str, text: str, parsed, plan, ranked: list[tuple[int, dict]], side, explain: bool,
            order_by: Callable[[dict, dict], list[tuple]] | None = None) -> list[dict]:
    """Fuse (when the vector side ran), grade and snip. Identity is the version in --history, else
    the key (one hit per key). `order_by(lex, sem)`: an ordering given by the caller (the bench's
    vector_order) instead of fusion.

    A lexical hit is reused; a semantic-only one is read from the index (it already passed the same
    slice, filters and operators). `score` is the cosine when the hit has one, else BM25 (as rule "hybrid fusion").
    """
    lex, sem = _candidates(mode, ranked, side)
    listing = plan.match is None
    cover, first = _coverage(conn, text, plan, ranked, lex, sem, listing)
    if order_by is not None:
        order = order_by(lex, sem)
    elif side is not None:
        order = _fused_order(conn, mode, lex, sem, side, cover, first)
    else:
        order = [(i, rank, None, None) for rank, i in enumerate(lex, 1)]
    return _hits(conn, parsed, order, lex, sem, side, cover, first, listing, explain)


def _candidates(mode: str, ranked, side) -> tuple[dict, dict]:
    """Each side's candidates by identity: lexical (vid, hit) and semantic Near, in rank order."""
    lex = {_ident(mode, vid, hit["key"]): (vid, hit) for vid, hit in ranked}
    sem: dict = {}
    for near in side.ranked if side is not None else []:
        sem.setdefault(_ident(mode, near.vid, near.key), near)
    return lex, sem


def _ident(mode: str, vid: int, key: str):
    return vid if mode == "history" else key


def _coverage(conn, text: str, plan, ranked, lex: dict, sem: dict, listing: bool) -> tuple[dict, set]:
    """How much of the question each candidate holds, and the hits that lead (an identifier found
    whole, else a decisive word match)."""
    from kyb_cli.core.search import relevance

    vids = sorted({vid for vid, _h in lex.values()} | {n.vid for n in sem.values()})
    weights = [] if listing else relevance.term_weights(conn, plan.terms)
    held = relevance.term_hits(conn, plan.terms, vids) if weights else {}
    vid_of = {i: v for i, (v, _h) in lex.items()} | {i: n.vid for i, n in sem.items()}
    cover = {i: relevance.coverage(held.get(v, set()), weights) for i, v in vid_of.items()}
    identifier = not listing and relevance.looks_like_identifier(text.split())
    first = {i for i in lex if identifier and cover[i] >= 1 - 1e-9}
    if not first and ranked:
        top = next(iter(lex))
        scores = [h["score"] for _v, h in ranked[:2]]
        ratio = scores[0] / scores[1] if len(scores) > 1 and scores[1] > 0 else float("inf")
        vrank = list(sem).index(top) + 1 if top in sem else None
        near = not sem or (vrank is not None and vrank <= relevance.DECISIVE_VECTOR_RANK)
        if ratio >= relevance.DECISIVE_BM25_RATIO and cover[top] >= relevance.DECISIVE_COVER and near:
            first = {top}  # a decisive word match leads the answer
    return cover, first


def _fused_order(conn, mode: str, lex: dict, sem: dict, side, cover: dict, first: set) -> list[tuple]:
    """Both sides fused (search/fusion.py); lexical hits the vector side missed get their meaning."""
    from kyb_cli.core.search.fusion import fuse
    from kyb_cli.core.search.vectors import meaning_of

    tie = {i: (h["key"], -v) for i, (v, h) in lex.items()}
    tie.update({_ident(mode, n.vid, n.key): (n.key, -n.vid) for n in sem.values()})
    score = {i: n.meaning for i, n in sem.items()}
    outside = {v: i for i, (v, _h) in lex.items() if i not in sem}
    if outside and side.meanings is not None:  # both vector sides, fused (search/route.py)
        score.update({outside[v]: m for v, m in side.meanings.items() if v in outside})
    elif outside and side.qvec is not None and side.fingerprint is not None:
        for v, s in meaning_of(conn, side.qvec, side.fingerprint, sorted(outside)).items():
            score[outside[v]] = s
    weight = {}
    if side.meanings is not None:  # both vector sides fused: their own weight of the words
        from kyb_cli.core.search.route import WORDS_WEIGHT

        weight = {"words_weight": WORDS_WEIGHT}
    fused = fuse(list(lex), list(sem), score, cover=cover, first=first, tie=tie, **weight)
    return [(f.ident, f.lexical_rank, f.vector_rank, f.score) for f in fused]


def _hits(conn, parsed, order, lex: dict, sem: dict, side, cover: dict, first: set, listing: bool,
          explain: bool) -> list[dict]:
    """The hits in `order`: read (semantic-only ones), graded, snipped, explained."""
    from kyb_cli.core.search import relevance
    from kyb_cli.core.search.lexical import hits_for

    need = [(sem[i].vid, sem[i].state) for i, *_ in order if i not in lex]
    extra = hits_for(conn, need)
    cal = side.calibration if side is not None else relevance.NONE
    if cal.floor_other is not None:
        from kyb_cli.core.search.route import is_english

        cal = relevance.for_question(cal, is_english(parsed.positive_text))
    words = _snippet_words(parsed)
    hits = []
    for i, lrank, vrank, fused_score in order:
        hit = lex[i][1] if i in lex else extra.get(sem[i].vid)
        if hit is None:
            continue
        near = sem.get(i)
        bm25 = hit["score"] if i in lex else None
        if near is not None:
            hit["score"] = round(near.cos, 6)
        if listing:
            hit["strength"], hit["found_by"] = "strong", "lexical"  # it satisfies all that was asked
        else:
            relevance.grade(hit, lexical=cover.get(i, 0.0) > 0, cover=cover.get(i, 0.0), whole=i in first,
                            sem_score=None if near is None else near.score, cal=cal)
        hit["snippet"] = ""  # filled for the hits returned (search.run): here its place and inputs
        hit[_SNIPPET_OF] = (words, None if near is None else near.part)
        if explain:
            hit["explain"] = _explain(near, lrank, vrank, bm25, fused_score, cover.get(i, 0.0), cal)
        hits.append(hit)
    return hits


def _explain(near, lrank, vrank, bm25, fused_score, cover: float, cal) -> dict:
    return {"lexical_rank": lrank, "vector_rank": vrank,
            "cosine": None if near is None else round(near.cos, 6), "bm25": bm25,
            "fused": None if fused_score is None else round(fused_score, 6),
            "coverage": round(cover, 4),
            "semantic_score": None if near is None or near.score is None else round(near.score, 4),
            "semantic_floor": cal.floor, "passage": None if near is None else near.part}


_SNIPPET_OF = "_snippet_of"  # a graded hit's snippet inputs until the answer is cut to its limit


def _snippet_words(parsed) -> list[str]:
    from kyb_cli.core.search.tokens import is_function_word

    out = [tok for term in parsed.positive for tok in term.tokens if not is_function_word([tok])]
    return out or [tok for term in parsed.positive for tok in term.tokens]


def _snippet(body: str, words: list[str], part: int | None) -> str:
    from kyb_cli.core.search.snippet import snippet

    passage = None
    if part:
        from kyb_cli.core.embed.recipe import chunks

        parts = chunks(body)
        passage = parts[part] if part < len(parts) else None
    return snippet(body, words, passage)

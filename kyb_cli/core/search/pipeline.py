"""THE query pipeline: bring the index to HEAD, search one slice lexically and by meaning, fuse, shape.

Every door runs it through `kyb_cli.api.query` (time arguments -> slice -> lexical + vectors -> fusion).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Callable

from kyb_cli.core.index.fresh import Fresh, with_index
from kyb_cli.core.index.warm import keeping
from kyb_cli.core.search.lexical import lexical
from kyb_cli.core.index.slice import Filters
from kyb_cli.core.plain import plain


@plain(frozen=True)
class Ordering:
    """An order of the hits that a caller passes in instead of fusion (the bench's VECTORS), named
    in the answer's `ranking`; the pipeline never decides to use one itself."""

    name: str
    order: Callable[[dict, dict], list[tuple]]  # (lexical candidates, semantic candidates) -> order


@plain(frozen=True)
class Ask:
    """What one search asks, the same for each phrasing of it."""

    mode: str = "current"
    as_of: int | None = None
    window: tuple[int, int] | None = None
    filters: Filters | None = None
    limit: int = 10
    recent: bool = False
    semantic: bool = False
    explain: bool = False
    as_of_event: int | None = None
    strong_only: bool = False
    wide: bool = False  # fuse or filter afterwards: every side brings fusion_candidates(limit)
    ordering: Ordering | None = None


def search(store_path: Path, text: str = "", *, mode: str = "current", as_of: int | None = None,
           window: tuple[int, int] | None = None, filters: Filters | None = None, limit: int = 10,
           recent: bool = False, semantic: bool = False, explain: bool = False,
           as_of_event: int | None = None, min_strength: str | None = None,
           also: list[str] | tuple[str, ...] = (), ordering: Ordering | None = None,
           annotate: bool = False) -> dict:
    """The response `{count, hits, confident, semantic, mode, head}` (+ `pending_vectors` when vectors ran).

    The question's operators (search/syntax.py) hold on both sides. With `semantic`, a question with
    a positive word and no `--recent`, the vector side runs in every time mode on the same slice,
    filters and operators, and is fused with BM25. When it cannot run, the answer is lexical with
    `semantic: false` and `semantic_off` holds the one-line reason (the CLI prints it). Each hit is
    graded (`strength`, `found_by`, search/relevance.py) and carries a `snippet`; `confident` is true
    when one hit is strong; `min_strength="strong"` keeps strong hits only. `also`: other phrasings
    of the same question, each searched the same way and fused into one answer (search/phrasings.py).
    `ordering`: the caller's order instead of fusion when the vector side ran (the bench's VECTORS).
    Snippets are cut for the hits kept only (not for every fusion candidate). `annotate`: each kept
    hit also gets `verified` and `stale` (index/trust.py), read on the same index connection.
    """
    if also:  # other phrasings: checked (and fused) by their module, off the one-question path
        from kyb_cli.core.search.phrasings import checked

        phrasings = checked(text, also)
    else:
        phrasings = [text]
    strong_only = min_strength == "strong"
    ask = Ask(mode, as_of, window, filters, limit, recent, semantic, explain, as_of_event, strong_only,
              wide=strong_only or len(phrasings) > 1, ordering=ordering)

    known = None
    if keeping():  # a door's words-only answer is kept per index state (not imported by a one-shot)
        from kyb_cli.core.search import known
    question = known.key(phrasings, ask) if known is not None else None

    def run(f: Fresh) -> dict:
        kept = known.answers(f) if question is not None else None
        response = known.kept(kept, question) if kept is not None else None
        if response is None:
            response = _response(f, [_phrasing(f, q, ask) for q in phrasings], ask, phrasings)
            if kept is not None:
                known.keep(kept, question, response)
        if annotate:
            from kyb_cli.core.index.trust import annotate_hits

            annotate_hits(f.store, response)  # joins this answer's index session
        return response

    response = with_index(store_path, run, history=mode != "current")  # the past waits (staged)
    if semantic:  # a door's new vectors (embed._write_later), several answers' in one commit
        from kyb_cli.core import embed

        embed.write_pending(batched=True)
    response.update(_times_asked(mode, as_of, window, as_of_event))
    return response


def _response(f: Fresh, answers: list[tuple[list[dict], dict]], ask: Ask, texts: list[str] = ()) -> dict:
    """The phrasings' answers as one response: fused (several), strong only, cut to the limit."""
    # USE's first per phrasing: the fusion's, never shown. Only vote.side writes it, and the semantic
    # side imports vote first: a words-only answer (the one-shot CLI's floor) imports nothing for it.
    from kyb_cli.core.search.answer_parts import graded
    from kyb_cli.core.search.lexical import readable

    vote = sys.modules.get("kyb_cli.core.search.vote")
    firsts = [o.pop(vote.FIRST, None) if vote is not None else None for _h, o in answers]
    if len(answers) > 1:
        from kyb_cli.core.search.phrasings import fuse_answers

        hits, out = fuse_answers([(_shaped(readable(f.conn, graded(h, h))), o) for h, o in answers], ask.mode,
                                 list(texts), firsts)
    else:
        hits, out = answers[0]
    if ask.strong_only:
        hits = [h for h in graded(hits, hits) if h["strength"] == "strong"]
    kept = readable(f.conn, hits, ask.limit)  # rows read, and grades made, for the hits kept only
    hits = _snipped(_shaped(graded(hits, kept)))
    confident = any(h["strength"] == "strong" for h in hits)
    response = {"count": len(hits), "hits": hits, "confident": confident, **out, "mode": ask.mode, "head": f.head}
    if not f.history_complete:
        from kyb_cli.core.index.origins import fill_snapshot_origins

        fill_snapshot_origins(f, hits)  # a snapshot's hits name their version too (never sha: null)
        response["history_complete"] = False
    return response


def _phrasing(f: Fresh, text: str, ask: Ask) -> tuple[list[dict], dict]:
    """One phrasing's graded hits (every candidate, best first) and what the answer says about it."""
    from kyb_cli.core.search.syntax import query_plan
    from kyb_cli.core.search.tokens import words

    parsed, plan = query_plan(text)
    hybrid = ask.semantic and not ask.recent and bool(words(parsed.positive_text))
    n = fusion_candidates(ask.limit) if (hybrid or ask.wide) else ask.limit

    def words() -> list:
        return lexical(f.conn, text, mode=ask.mode, as_of=ask.as_of, window=ask.window, filters=ask.filters,
                       limit=n, recent=ask.recent, as_of_event=ask.as_of_event, plan=plan, later=True)

    out: dict = {"semantic": False}
    side, ranked = _semantic(f, parsed, plan, ask, n, words, out) if hybrid else (None, words())
    order_by = None
    if side is not None and ask.ordering is not None:
        out["ranking"] = ask.ordering.name
        order_by = ask.ordering.order
    return _answer(f.conn, ask.mode, text, parsed, plan, ranked, side, ask.explain, order_by, f.head), out


def _semantic(f: Fresh, parsed, plan, ask: Ask, n: int, words, out: dict):
    """(the vector side(s) over the lexical side's slice or None, `out` saying why: `semantic_off`;
    the lexical side's hits, `words()`). Passages still without a vector start the background filler
    (a query never embeds them). A door's English question runs the words after e5 ranked, while the
    English model (the slower run) finishes: its run starts that much sooner; any other runs them first."""
    from kyb_cli.core import embed
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pinned, unpinned
    from kyb_cli.core.search.semantic import begin_answer, semantic_side

    begin_answer()  # the vector scans of this phrasing's answer are made once and read by every step
    pinned(f.conn)  # the index's state read once for every step below (vectors.db_state)
    try:
        sl = Slice(ask.mode, ask.as_of, ask.window, ask.filters or Filters(), ask.as_of_event)
        from kyb_cli.core.search.vote import voter

        english = _english_model(parsed.positive_text)
        other = None if english is not None else voter(parsed.positive_text)
        # The question under every model its route needs, side by side (e5, and the English model for
        # an English question, the multilingual vote for any other): two short runs cost about one on 2 cores.
        aside = None
        if english is not None and embed.is_resident():  # a door: e5 ranks while the English model runs
            both = embed.start_query(parsed.positive_text, [embed.E5, english])  # looked up here at once, then run
            aside = embed.finish_beside(embed.one_of(both, 1))
            given = embed.finish_query(embed.one_of(both, 0))
        else:
            ranked = words()
            given = embed.query_vectors(parsed.positive_text, [embed.E5] + [m for m in (english, other) if m])
        side = semantic_side(f.conn, parsed.positive_text, sl, n, require=plan.require, exclude=plan.exclude,
                             given=given[0])
        if aside is not None:
            ranked = words()
            # idle: the English model's thread needs the GIL at its run's end; coverage and snippets made
            # here meanwhile delayed it as much as they saved (paired -0.15..+0.33 ms, issue 38)
            given.append(aside.result())
        if side.ranked is None:
            out["semantic_off"] = side.reason
            return None, ranked
        out.update(semantic=True, pending_vectors=side.pending)
        if english is not None:
            side = _english_side(f.conn, parsed.positive_text, sl, n, plan, side, ranked, out, english, given[1])
        lagging = 0
        if other is not None:
            from kyb_cli.core.search import vote

            side, lagging = vote.side(f.conn, parsed.positive_text, sl, plan, side, other, given[1], out)
        if side.pending or lagging:
            from kyb_cli.core.index import staged

            staged.start_filler(f.store_path, f.git_dir)
        return side, ranked
    finally:
        unpinned()


def _times_asked(mode: str, as_of: int | None, window: tuple[int, int] | None, as_of_event: int | None) -> dict:
    """The time arguments as the answer states them (RFC 3339): `as_of`, `as_of_event`, `window`."""
    from kyb_cli.core.timestamps import rfc3339

    if mode == "as_of_event" and as_of_event is not None:
        return {"as_of_event": rfc3339(as_of_event), **({"as_of": rfc3339(as_of)} if as_of is not None else {})}
    if mode == "as_of" and as_of is not None:
        return {"as_of": rfc3339(as_of)}
    if mode == "changed_between" and window is not None:
        return {"window": [rfc3339(window[0]), rfc3339(window[1])]}
    return {}


def _english_model(text: str):
    """The English model of the registry when the router sends `text` to it (search/route.py), else None."""
    from kyb_cli.core.embed.models import MODELS
    from kyb_cli.core.search.route import is_english

    spec = next((m for m in MODELS if m.languages == "en"), None)
    return spec if spec is not None and is_english(text) else None


def _english_side(conn, text: str, sl, n: int, plan, side, ranked, out: dict, spec, given: tuple):
    """An English question is ranked by e5 and the English model (`spec`, the question's vector
    under it `given`) fused (search/route.py); without that model the answer says so in
    `semantic_missing` ({model: reason}) and e5 ranks alone."""
    from kyb_cli.core.search.route import combine
    from kyb_cli.core.search.semantic import semantic_side

    english = semantic_side(conn, text, sl, n, require=plan.require, exclude=plan.exclude, spec=spec,
                            given=given, scored=False)  # its hits' strength is never read: e5's is
    if english.ranked is None:
        out["semantic_missing"] = {spec.name: english.reason}
        return side
    fused = combine(conn, side, english, sl, [vid for vid, _h in ranked])
    out["pending_vectors"] = fused.pending  # what either model still lacks (the answer uses what exists)
    return fused


def fusion_candidates(limit: int) -> int:
    from kyb_cli.core.search.fusion import candidates

    return candidates(limit)


def vector_order(lex: dict, sem: dict) -> list[tuple]:
    """The bench's ordering (the dev set's "vectors only" column): the vector side's order alone."""
    return [(i, None, r, None) for r, i in enumerate(sem, 1)]


VECTORS = Ordering("vectors", vector_order)


def _answer(conn, mode: str, text: str, parsed, plan, ranked: list[tuple[int, dict]], side, explain: bool,
            order_by: Callable[[dict, dict], list[tuple]] | None = None, head: str | None = None) -> list[dict]:
    """Fuse (when the vector side ran), grade and snip. Identity is the version in --history, else
    the key (one hit per key). `order_by(lex, sem)`: an ordering given by the caller (the bench's
    vector_order) instead of fusion.

    A lexical hit is reused; a semantic-only one is read from the index (it already passed the same
    slice, filters and operators). `score` is the cosine when the hit has one, else BM25 (as rule "hybrid fusion").
    """
    from kyb_cli.core.index.kept_state import one_read

    with one_read(conn):  # its ~15 index reads in one transaction (~10 us a statement saved)
        return _answered(conn, mode, text, parsed, plan, ranked, side, explain, order_by, head)


def _answered(conn, mode: str, text: str, parsed, plan, ranked: list[tuple[int, dict]], side, explain: bool,
              order_by: Callable[[dict, dict], list[tuple]] | None, head: str | None) -> list[dict]:
    """_answer's steps, inside its read transaction."""
    lex, sem = _candidates(mode, ranked, side)
    listing = plan.match is None
    unknown = _unmeasured(conn, lex, sem, side)
    cover, best, first = _coverage(conn, text, plan, ranked, lex, sem, listing, head, unknown)
    if order_by is not None:
        order = order_by(lex, sem)
    elif side is not None:
        order = _fused_order(conn, mode, lex, sem, side, cover, first)
        if side.vote:  # a question not in English: the multilingual vote (search/vote.py), ranking only
            from kyb_cli.core.search.vote import reorder

            order = reorder(order, sem, side.vote, lambda near: _ident(mode, near.vid, near.key), first)
    else:
        order = [(i, rank, None, None) for rank, i in enumerate(lex, 1)]
    return _hits(conn, parsed, order, lex, sem, side, cover, first, listing, explain, partial=bool(unknown),
                 best=best)


def _unmeasured(conn, lex: dict, sem: dict, side) -> set:
    """The word candidates whose meaning the vector side cannot judge yet: no vector on any side
    (pending, the filler has not reached them). Empty when nothing is pending (no cost)."""
    if side is None or not side.pending:
        return set()
    outside = {v: i for i, (v, _h) in lex.items() if i not in sem}
    if not outside:
        return set()
    if side.meanings is not None:  # both vector sides fused (search/route.py)
        judged = set(side.meanings)
    elif side.qvec is not None and side.fingerprint is not None:
        from kyb_cli.core.search.semantic import meaning_of

        judged = set(meaning_of(conn, side.qvec, side.fingerprint, sorted(outside)))
    else:
        return set()
    return {i for v, i in outside.items() if v not in judged}


def _candidates(mode: str, ranked, side) -> tuple[dict, dict]:
    """Each side's candidates by identity: lexical (vid, hit) and semantic Near, in rank order."""
    lex = {_ident(mode, vid, hit["key"]): (vid, hit) for vid, hit in ranked}
    sem: dict = {}
    for near in side.ranked if side is not None else []:
        sem.setdefault(_ident(mode, near.vid, near.key), near)
    return lex, sem


def _ident(mode: str, vid: int, key: str):
    return vid if mode == "history" else key


def _coverage(conn, text: str, plan, ranked, lex: dict, sem: dict, listing: bool,
              head: str | None = None, unknown: set = frozenset()) -> tuple[dict, dict, set]:
    """How much of the question each candidate holds (the whole record; its best passage: the two
    differ for a long body, relevance.passage_cover), and the hits that lead (_leaders)."""
    from kyb_cli.core.search import relevance

    vids = sorted({vid for vid, _h in lex.values()} | {n.vid for n in sem.values()})
    weights = [] if listing else relevance.term_weights(conn, plan.terms, head)
    held = relevance.term_hits(conn, plan.terms, vids, head) if weights else {}
    vid_of = {i: v for i, (v, _h) in lex.items()} | {i: n.vid for i, n in sem.items()}
    whole = relevance.coverages(held, set(vid_of.values()), weights)
    passage = relevance.passage_cover(conn, plan.terms, weights, whole) if weights else {}
    cover = {i: whole[v] for i, v in vid_of.items()}
    best = {i: passage.get(v, whole[v]) for i, v in vid_of.items()}
    return cover, best, _leaders(text, ranked, lex, sem, cover, listing, unknown, best)


def _leaders(text: str, ranked, lex: dict, sem: dict, cover: dict, listing: bool, unknown: set = frozenset(),
             best: dict | None = None) -> set:
    """The hits that lead the answer: an identifier found whole, else a decisive word match (BM25
    well ahead of the next, most of the question held, and the vector side agreeing enough — or
    unable to judge it: no vector yet, `unknown`)."""
    from kyb_cli.core.search import relevance

    identifier = not listing and relevance.looks_like_identifier(text.split())
    first = {i for i in lex if identifier and cover[i] >= 1 - 1e-9}
    if first or not ranked:
        return first
    top = next(iter(lex))
    scores = [h["score"] for _v, h in ranked[:2]]
    ratio = scores[0] / scores[1] if len(scores) > 1 and scores[1] > 0 else float("inf")
    vrank = list(sem).index(top) + 1 if top in sem else None
    near = not sem or top in unknown or (vrank is not None and vrank <= relevance.DECISIVE_VECTOR_RANK)
    held = (best or cover)[top]  # a long body leads only when its words meet in one passage
    if ratio >= relevance.DECISIVE_BM25_RATIO and held >= relevance.DECISIVE_COVER and near:
        return {top}
    return set()


def _fused_order(conn, mode: str, lex: dict, sem: dict, side, cover: dict, first: set) -> list[tuple]:
    """Both sides fused (search/fusion.py); lexical hits the vector side missed get their meaning."""
    from kyb_cli.core.search.fusion import fuse
    from kyb_cli.core.search.semantic import meaning_of

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
    return fuse(list(lex), list(sem), score, cover=cover, first=first, tie=tie, **weight)


def _hits(conn, parsed, order, lex: dict, sem: dict, side, cover: dict, first: set, listing: bool,
          explain: bool, partial: bool = False, best: dict | None = None) -> list[dict]:
    """The hits in `order`, each graded, snipped and explained once kept (answer_parts.Ungraded; a
    semantic-only one's row read then too). `partial`: a candidate has no vector yet, so the meaning
    side is no evidence (only words make a hit strong)."""
    from kyb_cli.core.search import relevance
    from kyb_cli.core.search.answer_parts import Snippet, Ungraded, explain as explain_of, snippet_words
    from kyb_cli.core.search.lexical import Unread

    # a semantic-only hit's row is read once kept (lexical.readable, in _response), then shaped (Later)
    extra = {sem[i].vid: Unread(sem[i].vid, sem[i].state) for i, *_ in order if i not in lex}
    cal = side.calibration if side is not None else relevance.NONE
    if cal.floor_other is not None:
        from kyb_cli.core.search.route import is_english

        cal = relevance.for_question(cal, is_english(parsed.positive_text))
    if partial:
        cal = relevance.words_only(cal)
    words = snippet_words(parsed)
    from kyb_cli.core.search.fusion import typical

    usual = typical(list(cover.values()))  # the agreement rule's "the store talks about it"
    hits = Ungraded()
    todo = hits.todo
    for i, lrank, vrank, fused_score in order:
        if i in lex:
            hit = lex[i][1]
        elif sem[i].vid in extra:
            hit = extra[sem[i].vid]
        else:
            continue
        todo[id(hit)] = (i, lrank, vrank, fused_score)
        hits.append(hit)

    def grade(hit: dict, i, lrank, vrank, fused_score) -> None:
        near = sem.get(i)
        bm25 = hit["score"] if i in lex else None
        if near is not None:
            hit["score"] = round(near.cos, 6)
        if listing:
            hit["strength"], hit["found_by"] = "strong", "lexical"  # it satisfies all that was asked
        else:
            c = cover.get(i, 0.0)
            b = (best or cover).get(i, c)
            relevance.grade(hit, lexical=c > 0, cover=c, whole=i in first, best_cover=b,
                            sem_score=None if near is None else near.score, cal=cal, usual=usual)
        hit["snippet"] = Snippet(words, None if near is None else near.part)  # cut once kept: _snipped
        if explain:
            hit["explain"] = explain_of(near, lrank, vrank, bm25, fused_score, (best or cover).get(i, 0.0), cal)

    hits.grade = grade
    return hits


def _shaped(hits: list[dict]) -> list[dict]:
    """`hits` with each lexical.Later shaped."""
    from kyb_cli.core.search.lexical import shaped

    return [shaped(h) for h in hits]


def _snipped(hits: list[dict]) -> list[dict]:
    """`hits` with each pending snippet cut from its body (search/answer_parts.py)."""
    from kyb_cli.core.search.answer_parts import snipped

    return snipped(hits)

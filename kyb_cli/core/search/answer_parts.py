"""An answer's last steps after fusion (search/pipeline.py's `_answer` and `_response`): the hits
graded once kept, their snippets cut from their bodies, their `explain`. Pure: no index, no model,
no numpy (their reads run in one transaction: index/kept_state.one_read).
"""

from __future__ import annotations


class Ungraded(list):
    """An answer's hits in order, each graded (strength, found_by, its score, snippet, explain) only
    once kept (`graded`): fusion orders ~40 candidates for the 10 a response keeps, and grading them
    all was ~0.1 ms of each hybrid answer (issue 38). `todo`: id(hit) -> what grading it needs;
    `grade(hit, *todo[id(hit)])` sets what the loop over every candidate set, in the same order."""

    __slots__ = ("todo", "grade")

    def __init__(self) -> None:
        super().__init__()
        self.todo: dict[int, tuple] = {}
        self.grade = None


def graded(hits: list[dict], these: list[dict]) -> list[dict]:
    """`these` (hits of `hits`, or all of them) each graded, if `hits` is Ungraded and they are not yet."""
    if isinstance(hits, Ungraded):
        todo = hits.todo
        for hit in these:
            args = todo.pop(id(hit), None)
            if args is not None:
                hits.grade(hit, *args)
    return these


class Snippet:
    """A hit's snippet not cut yet: the question's words and the best vector passage. Fusion keeps
    ~35 candidates for 10 hits; cutting a snippet is the costliest step per hit, so only the hits
    kept are cut (`snipped`)."""

    __slots__ = ("part", "words")

    def __init__(self, words: list[str], part: int | None) -> None:
        self.words, self.part = words, part


def snipped(hits: list[dict]) -> list[dict]:
    """`hits` with each pending snippet cut from its body."""
    for hit in hits:
        todo = hit.get("snippet")
        if isinstance(todo, Snippet):
            hit["snippet"] = cut(hit.get("body", ""), todo.words, todo.part)
    return hits


def cut(body: str, words: list[str], part: int | None) -> str:
    """One hit's snippet (search/snippet.py): the vector side's best passage `part` its fallback."""
    from kyb_cli.core.search.snippet import snippet

    passage = None
    if part:
        from kyb_cli.core.embed.recipe import chunks

        parts = chunks(body)
        passage = parts[part] if part < len(parts) else None
    return snippet(body, words, passage)


def snippet_words(parsed) -> list[str]:
    """The question's words a snippet looks for: its positive terms' tokens, function words left out
    unless nothing else is left."""
    from kyb_cli.core.search.tokens import is_function_word

    out = [tok for term in parsed.positive for tok in term.tokens if not is_function_word([tok])]
    return out or [tok for term in parsed.positive for tok in term.tokens]


def explain(near, lrank, vrank, bm25, fused_score, cover: float, cal) -> dict:
    """A hit's `explain` (`--explain`): its ranks, scores and the floor it was graded by."""
    return {"lexical_rank": lrank, "vector_rank": vrank,
            "cosine": None if near is None else round(near.cos, 6), "bm25": bm25,
            "fused": None if fused_score is None else round(fused_score, 6),
            "coverage": round(cover, 4),
            "semantic_score": None if near is None or near.score is None else round(near.score, 4),
            "semantic_floor": cal.floor, "passage": None if near is None else near.part}

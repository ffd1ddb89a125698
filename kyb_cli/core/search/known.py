"""A long-lived door's answers to words-only questions, kept per index state: a known question is
answered without searching again.

Agents ask the same question again and again ("a known one in 3 ms", issue 38). A lexical answer
(no vector side) is a function of the question, what it asks (time mode, filters, limit...) and the
index: nothing in the words-only pipeline reads the clock, the config or a model. So a door
(index/warm.keep) keeps each such answer, as the pipeline shaped it before anything time-dependent
or reader-dependent is added (trust's `verified`/`stale`, receipts, the deadlines block: all made
anew on every answer), under the index state it was made at (warm.index_state: the file, HEAD,
the newest version): a write, a pull, a sync or a rebuild makes a new state, and the old answers
are dropped. Kept as marshal bytes: each answer is new objects, so a caller that adds fields to a
hit never changes the kept one. Never kept: an answer by meaning (vectors arrive without a new
state), a snapshot's answer (its hits' commits are filled in as the history comes), a one-shot
process's, and an answer given with the bench's own ordering.
"""

from __future__ import annotations

import marshal

from kyb_cli.core.index import warm

KEPT_MAX = 256  # answers kept for one index state; more: start over
KEPT_BYTES = 32 << 20  # ... and at most this many bytes of them (hits carry whole bodies); more: start over
ANSWER_MAX = 1 << 20  # an answer larger than this is answered, not kept
_BYTES = None  # the key under which an index state's dict counts the bytes it keeps
_KEPT: list = [(None, {})]


def key(phrasings: list[str], ask) -> str | None:
    """What identifies an answer within one index state, or None when it is never kept."""
    if not warm.keeping() or ask.semantic or ask.ordering is not None:
        return None
    return repr((phrasings, ask))


def answers(f) -> dict | None:
    """The answers kept at `f`'s index state (question -> marshal bytes), read once before the
    answer is made and written into after it; None for a snapshot (never kept)."""
    if not f.history_complete:
        return None
    return warm.kept_for(_KEPT, warm.index_state(f.conn, f.head)[1], KEPT_MAX)


def kept(answers: dict | None, question: str) -> dict | None:
    """The answer kept for `question` (a `key`), as new objects; else None."""
    data = None if answers is None else answers.get(question)
    return None if data is None else marshal.loads(data)


def keep(answers: dict | None, question: str, response: dict) -> None:
    """Keep `response` for `question` in `answers` (from `answers(f)`, before it was made)."""
    if answers is None:
        return
    try:
        data = marshal.dumps(response)
    except ValueError:  # a value marshal does not write: answered, not kept
        return
    if len(data) > ANSWER_MAX:
        return
    held = answers.get(_BYTES, 0) + len(data)
    if held > KEPT_BYTES:
        answers.clear()
        held = len(data)
    answers[_BYTES] = held
    answers[question] = data

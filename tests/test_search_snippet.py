"""`snippet` (docs/SEARCH.md "Snippets"): the best-matching part of a hit's body, at most 160
characters, or the start of the passage found by meaning when no word matches."""

from __future__ import annotations

from kyb_cli.core.search.snippet import LIMIT, snippet

BODY = ("## Meaning\n\nThe alert fires when the disk is almost full. It is a warning.\n\n"
        "## Diagnosis\n\nCheck the kubelet logs on the node. " + "Filler sentence about nothing. " * 20 +
        "\n\n## Mitigation\n\nRotate the journal with journalctl --vacuum-size=500M and restart the collector.")


def test_snippet_is_the_window_holding_the_question_words():
    s = snippet(BODY, ["vacuum", "journal"])
    assert "journalctl --vacuum-size=500M" in s and len(s) <= LIMIT


def test_snippet_matches_inflected_words_by_their_start():
    assert "Rotate the journal" in snippet(BODY, ["rotating"])


def test_snippet_without_common_words_starts_the_best_passage():
    passage = "Check the kubelet logs on the node. Filler sentence about nothing."
    assert snippet(BODY, ["nichts"], passage=passage).startswith("Check the kubelet logs")


def test_snippet_never_passes_the_limit_and_cuts_on_a_word():
    s = snippet("word " * 400, [])
    assert len(s) <= LIMIT and s.endswith("…") and not s[:-1].endswith(" ")


def test_short_body_is_its_own_snippet_with_whitespace_collapsed():
    assert snippet("Checkout writes go\nthrough svc-checkout.", ["checkout"]) == "Checkout writes go through svc-checkout."
    assert snippet("", ["x"]) == ""


def test_snippet_word_match_equals_stemming_every_token():
    """The str.find matcher (snippet._held) holds exactly the stems that splitting the text into
    tokens and cutting each to five letters gives: start of a token, or the whole of a short one."""
    import re

    from hypothesis import given, settings, strategies as st

    from kyb_cli.core.search import snippet as sn

    alphabet = st.sampled_from(list("abcpost_- .\n9Зазк") + ["İ", "ß"])

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet, max_size=60), st.lists(st.text(alphabet, min_size=1, max_size=7), max_size=4))
    def check(text, words):
        text = text.lower()
        stems = sorted({w.lower()[:sn.STEM] for w in words if re.fullmatch(r"[^\W_]+", w.lower()[:sn.STEM])})
        tokens = {t[:sn.STEM] for t in re.findall(r"[^\W_]+", text)}
        held = sn._held(text, stems)
        assert set(held) == tokens & set(stems)
        assert held == {s: sn._first_at(text, s) for s in held}  # where each first starts

    check()


def test_an_ascii_body_splits_as_any_text_does_and_cjk_stops_still_split():
    """snippet._pieces compiles the CJK stops only for a non-ASCII body (issue 38): on ASCII text the
    two patterns find the same pieces."""
    import random

    from kyb_cli.core.search import snippet as sn

    rng = random.Random(38)
    alphabet = "ab .!?\n\t,x1"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert sn._ASCII_PIECES.findall(text) == sn._pieces_of_any_text().findall(text)
    assert sn._pieces("第一句。第二句！Third one? yes") == ["第一句。", "第二句！", "Third one?", "yes"]


def test_a_non_ascii_body_without_cjk_stops_splits_alike_without_compiling_them(monkeypatch):
    """An accent or a dash is not a CJK stop: such a body splits as any text does, and the wide
    class is compiled only for a body holding 。！or ？ (issue 38)."""
    import random

    from kyb_cli.core.search import snippet as sn

    any_text = sn._pieces_of_any_text()
    rng = random.Random(39)
    alphabet = "ab .!?\n\t,x1é—ü"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert sn._ASCII_PIECES.findall(text) == any_text.findall(text)
    asked = []
    monkeypatch.setattr(sn, "_pieces_of_any_text", lambda: asked.append(1) or any_text)
    assert sn._pieces("Café — naïve. Über alles!") == ["Café — naïve.", "Über alles!"]
    assert asked == []
    assert sn._pieces("第一句。second") == ["第一句。", "second"] and asked == [1]


def test_a_question_word_late_in_a_long_sentence_is_shown_from_there():
    """A sentence longer than the limit whose only question word is past the cut: the snippet starts
    (after `…`) on a word before it, so it shows what matched, and still ends on a word."""
    body = "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma " * 2 + \
        "the postgres replica fails over to the standby node and the pager rings the oncall engineer"
    s = snippet(body, ["replica"])
    assert s.startswith("…") and "replica" in s and len(s) <= LIMIT and s[1] != " "
    assert s[1:].split()[0] in body.split()  # starts on a whole word
    near_end = snippet("Alpha beta gamma " * 10 + "then the replica fails.", ["replica"])
    assert near_end.endswith("the replica fails.") and LIMIT - 10 < len(near_end) <= LIMIT  # ends with the text
    early = snippet("The replica " + "filler words here " * 10, ["replica"])
    assert early.startswith("The replica") and early.endswith("…")  # an early word: cut from the start


def test_a_one_piece_window_is_cut_as_the_general_path_cuts_it():
    """snippet's one-piece window cut from _held's first places (not lowered and searched again)
    gives what _cut_at_words gives, late words, short stems and a long lower case included."""
    import random

    from kyb_cli.core.search import snippet as sn

    rng = random.Random(38)
    vocabulary = ["replica", "rep", "postgres", "pager", "oncall", "x9", "İstanbul", "ärger", "fail", "failover"]
    for _ in range(800):
        body = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 40)))
        if rng.random() < 0.3:
            body += ". " + " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 20)))
        words = rng.sample(vocabulary, rng.randint(1, 3))
        assert snippet(body, words) == _general(sn, body, words), (body, words)


def _general(sn, body: str, words: list[str], limit: int = LIMIT) -> str:
    """snippet() with its window always cut by _cut_at_words (as before the one-piece cut)."""
    pieces, lowered = sn._prepared(body)
    if not pieces:
        return ""
    usable = sn._usable(tuple(words))
    best, best_score = None, 0
    stems = [set(sn._held(p, usable)) for p in lowered] if usable else []
    for i in range(len(stems)):
        found: set[str] = set()
        length = -1
        for j in range(i, len(pieces)):
            if length >= 0 and length + 1 + len(pieces[j]) > limit:
                break
            length += 1 + len(pieces[j])
            found |= stems[j]
            if len(found) > best_score:
                best, best_score = (i, j), len(found)
        if best_score == len(usable):
            break
    if best is None:
        return sn._lead(body, limit)
    i, j = best
    text = " ".join(pieces[i:j + 1])
    for k in range(j + 1, len(pieces)):
        if len(text) + 1 + len(pieces[k]) > limit:
            break
        text += " " + pieces[k]
    return sn._cut_at_words(text, usable, limit)

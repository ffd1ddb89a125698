"""`snippet` (docs/SEARCH.md "Snippets"): the best-matching part of a hit's body, at most 240
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

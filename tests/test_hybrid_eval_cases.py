"""The search-quality harness measures what it claims: its paraphrases share no word with their entry."""

from __future__ import annotations

from bench import eval_search


def test_eval_paraphrases_share_no_word_with_their_entry():
    assert eval_search.check_cases() == []


def test_eval_overlap_check_sees_stemmed_and_folded_words():
    # porter stemming, case folding and the Russian stem prefix all count as a shared word
    assert eval_search.shared_words("Streaming EVENTS", "nats-streams", "Message bus", "Events on NATS") == \
        ["Streaming", "EVENTS"]
    assert eval_search.shared_words("стримах", "x", "Стримы", "") == ["стримах"]
    assert eval_search.shared_words("how are we", "x", "Deploy freeze", "No deploys on Fridays") == []

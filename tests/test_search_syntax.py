"""Query syntax (docs/SEARCH.md "Query syntax"): phrases, +must, -exclude / NOT, prefix*, and bad
syntax that degrades to words. Pure parser tests; the end-to-end rules are in test_search_operators.py."""

from __future__ import annotations

import pytest

from kyb_cli.core.search.syntax import Term, parse, plan


def t(*tokens: str, prefix: bool = False, quoted: bool = False) -> Term:
    return Term(tuple(tokens), prefix, quoted)


def test_plain_words_are_any_match():
    p = parse("redis kafka")
    assert p.should == [t("redis"), t("kafka")] and not p.must and not p.exclude
    assert plan(p).match == '"redis" OR "kafka"'


def test_quoted_phrase_is_required_and_exact():
    p = parse('"disk full" alert')
    assert p.must == [t("disk", "full", quoted=True)] and p.should == [t("alert")]
    assert plan(p).match == '("disk full") AND ("disk full" OR "alert")'


def test_plus_requires_and_minus_excludes():
    p = parse("+redis -kafka cache")
    assert p.must == [t("redis")] and p.exclude == [t("kafka")] and p.should == [t("cache")]
    pl = plan(p)
    assert pl.require == '"redis"' and pl.exclude == '"kafka"'
    assert pl.match == '(("redis") AND ("redis" OR "cache")) NOT ("kafka")'


def test_upper_case_and_requires_both_words():
    p = parse("redis AND kafka")
    assert p.must == [t("redis"), t("kafka")] and not p.should


def test_upper_case_not_excludes_the_next_word_or_phrase():
    assert parse("NOT redis").exclude == [t("redis")]
    assert parse('deploy NOT "node 3"').exclude == [t("node", "3", quoted=True)]


def test_lower_case_operator_words_are_words():
    p = parse("not and or")
    assert p.should == [t("not"), t("and"), t("or")] and not p.exclude


def test_prefix_star_needs_two_letters():
    assert parse("deplo*").should == [t("deplo", prefix=True)]
    assert parse("d*").should == [t("d")]
    assert plan(parse("deplo*")).match == '"deplo" *'
    assert plan(parse("svc-check*")).match == '"svc check" *'


def test_positive_text_leaves_excluded_words_out():
    assert parse('redis -kafka "hot key" NOT memcached').positive_text == "redis hot key"


@pytest.mark.parametrize("text", ['"unclosed', "title:(((", "AND OR NOT", "*", "-", "+", "NOT", "a AND", "OR",
                                  '""', "+-*/", "NOT NOT", "- - -", '"a" "', "AND AND x", "🎉 -🎉"])
def test_bad_syntax_never_raises_and_degrades_to_words(text):
    p = parse(text)
    pl = plan(p)
    for expr in (pl.match, pl.require, pl.exclude):
        assert expr is None or all(part.count('"') % 2 == 0 for part in expr.split(" OR "))


def test_dangling_operators_become_words():
    assert parse("AND OR NOT").should == [t("and"), t("or"), t("not")]
    assert parse('"unclosed').should == [t("unclosed")]


def test_every_token_is_quoted_in_the_match():
    pl = plan(parse('title:((( +NEAR(a -b) "x* y" z*'))
    import re

    bare = re.sub(r'"[^"]*"', "", pl.match or "")
    assert set(bare.split()) <= {"AND", "OR", "NOT", "(", ")", "*", "(", ")"} | {s for s in bare.split() if set(s) <= set("()*")}

"""Issue 42: the guide's JSON examples are what kyb prints. Each marked block is run again (in-process,
a fresh HOME and store) and compared with version ids and times as placeholders: a field gained, lost,
renamed or worded otherwise fails here. `./dev docs` writes them anew."""

from __future__ import annotations

import os

import pytest

from kyb_cli.devtools import gen_examples
from tests.support.inprocess import run_inprocess

SHOWN = [(page, name, text) for page in gen_examples.PAGES for name, text in gen_examples.blocks(page)]


def _inprocess(argv, stdin, env):
    cwd = os.path.join(env["HOME"], "proj")
    code, out, err = run_inprocess(argv, env, cwd=cwd, input=stdin)
    assert code == 0, (argv, err)
    return out


def test_the_guide_has_examples_to_check():
    assert {name for _p, name, _t in SHOWN} >= {"quickstart"}


@pytest.mark.parametrize("page,name,text", SHOWN, ids=[f"{p.name}:{n}" for p, n, _t in SHOWN])
def test_an_example_is_what_kyb_prints(page, name, text):
    fresh = gen_examples.run(name, _inprocess)
    assert gen_examples.normalised(text) == gen_examples.normalised(fresh), (
        f"{page.name}: example '{name}' no longer matches what kyb prints — run ./dev docs")


def test_a_changed_answer_fails_the_comparison():
    """The check can fail: one field renamed in a shown answer is told apart."""
    _page, name, text = SHOWN[0]
    assert gen_examples.normalised(text.replace('"is_head"', '"is_current"', 1)) != gen_examples.normalised(text)

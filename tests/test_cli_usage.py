"""Usage errors keep the contract: one `kyb: …` line on stderr, exit 2, empty stdout, nothing written."""

from __future__ import annotations

import os


def test_mistyped_query_option_is_a_usage_error_not_search_text(kyb):
    res = kyb("query", "port", "--histroy")
    assert (res.code, res.stdout) == (2, "")
    assert "--histroy" in res.stderr and "--history" in res.stderr  # did you mean


def test_single_dash_words_are_still_query_text(kyb):
    res = kyb("query", "-x", "--no-semantic")
    assert res.code == 0 and res.json["count"] == 0


def test_text_after_double_dash_is_searched_as_is(kyb):
    kyb("add", "--key", "flags", "--title", "Flags", input="the --histroy flag is a typo")
    res = kyb("query", "--no-semantic", "--", "--histroy")
    assert res.code == 0 and [h["key"] for h in res.json["hits"]] == ["flags"]


def test_usage_errors_are_one_kyb_line_with_exit_2(kyb):
    for args in (("add", "--key", "x"), ("nosuchcommand",), ("query", "--as-of")):
        res = kyb(*args)
        assert (res.code, res.stdout) == (2, ""), args
        assert res.stderr.startswith("kyb: ") and res.stderr.count("\n") == 1, res.stderr


def test_internal_errors_are_one_line_and_exit_70(kyb_process, tmp_path):
    """A bug never shows a traceback, nor exits 1 ('not found') or 4 ('your store is broken').
    A process: the bug is planted by a sitecustomize that only a new interpreter reads."""
    boom = tmp_path / "sitecustomize.py"
    boom.write_text(
        "import kyb_cli.core.records.validate as v\n"
        "def _boom(*a, **k):\n    raise ZeroDivisionError('synthetic bug')\n"
        "v.validate = _boom\n")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    res = kyb_process("add", "--key", "k", "--title", "t", input="b", env={"PYTHONPATH": path})
    assert (res.code, res.stdout) == (70, "")
    assert res.stderr == "kyb: internal error: ZeroDivisionError: synthetic bug (a bug: please report it)\n"


def test_query_help_still_works(kyb):
    res = kyb("query", "--help")
    assert res.code == 0 and "--as-of" in res.stdout and "--changed-between" in res.stdout


def test_every_command_has_working_help(kyb):
    """`kyb <command> --help` answers for every registered command (no custom parser swallows it)."""
    from kyb_cli.cli.app import COMMANDS

    for name in COMMANDS:
        res = kyb(name, "--help")
        assert res.code == 0 and "Usage:" in res.stdout, (name, res.stderr)

"""Time arguments outside what the parser can represent (years 1 and 9999 with an offset that pushes
them past the calendar) are usage errors, exit 2, in every command that takes one."""

from __future__ import annotations

import pytest

from kyb_cli.core.errors import UsageError
from kyb_cli.core.timeargs import END, START, parse_time

EDGES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0001-01-01T00:30:00+00:45"]


@pytest.mark.parametrize("text", EDGES)
@pytest.mark.parametrize("bound", (START, END))
def test_out_of_range_time_is_a_usage_error(text, bound):
    with pytest.raises(UsageError) as err:
        parse_time(text, bound=bound)
    assert text in err.value.message


@pytest.mark.parametrize("text", ["0001-01-01", "9999-12-31", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_the_calendar_edges_themselves_still_parse(text):
    assert isinstance(parse_time(text, bound=END), int)


@pytest.mark.parametrize("text", EDGES)
@pytest.mark.parametrize("args", [
    ("query", "x", "--as-of"),
    ("query", "x", "--changed-between", "2026-01-01"),
    ("query", "x", "--changed-between", "0001-01-02", "--"),
])
def test_query_time_out_of_range_exits_2(kyb, args, text):
    argv = list(args)
    if argv[-1] == "--":  # the edge as the upper bound
        argv = argv[:-1] + [text]
    elif argv[-1] == "2026-01-01":  # the edge as the lower bound
        argv = argv[:-1] + [text, "2026-01-01"]
    else:
        argv.append(text)
    res = kyb(*argv)
    assert (res.code, res.stdout) == (2, ""), res.stderr
    assert res.stderr.startswith("kyb: ") and "internal error" not in res.stderr

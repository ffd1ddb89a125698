"""bench_warm times its doors side by side: each round gives every door a turn of `block` calls,
the first door rotating, so a swing of a shared machine's load lands on all of them (issue 38:
timed one door after another, a busy minute showed as one door's wall 12-22 ms above its CPU),
while a door still answers calls in a row as it does for one agent (call by call, each hybrid
call followed another server's, which cost it ~70% more CPU at 10k keys)."""

from __future__ import annotations

import os

from bench.bench_warm import QUESTIONS, time_doors


def _timed(block: int, runs: int) -> tuple[list, dict]:
    calls: list[tuple[str, bool]] = []

    def door(name: str):
        def ask(text: str, semantic: bool) -> dict:
            calls.append((name, semantic))
            return {"semantic": semantic}
        return ask, os.getpid(), name

    out = time_doors({n: door(n) for n in ("a", "b", "c")}, runs=runs, block=block)
    return calls[3 * 2 * len(QUESTIONS):], out  # after each door's warm-up: six questions of each kind


def test_doors_take_turns_call_by_call():
    timed, out = _timed(block=1, runs=4)
    assert [name for name, semantic in timed if semantic] == list("abc" "bca" "cab" "abc")
    # per call: a known lexical question, a new one (no known answer), then hybrid
    assert [semantic for _name, semantic in timed] == [False, False, True] * 12
    assert set(out) == {"a", "b", "c"} and all(r["semantic"] for r in out.values())


def test_doors_take_turns_a_block_of_calls_at_a_time():
    timed, _out = _timed(block=2, runs=5)
    assert [name for name, semantic in timed if semantic] == list("aabbcc" "bbccaa" "cab")
    assert [semantic for _name, semantic in timed] == [False, False, True] * 15

"""bench_warm times its doors side by side: each round asks every door, the first door rotating,
so a swing of a shared machine's load lands on all of them (issue 38: timed one door after
another, a busy minute showed as one door's wall 12-22 ms above its CPU)."""

from __future__ import annotations

import os

from bench.bench_warm import QUESTIONS, time_doors


def test_doors_take_turns_call_by_call():
    calls: list[tuple[str, bool]] = []

    def door(name: str):
        def ask(text: str, semantic: bool) -> dict:
            calls.append((name, semantic))
            return {"semantic": semantic}
        return ask, os.getpid(), name

    out = time_doors({n: door(n) for n in ("a", "b", "c")}, runs=4)
    timed = calls[3 * 2 * len(QUESTIONS):]  # after each door's warm-up: six questions of each kind
    assert [name for name, semantic in timed if not semantic] == list("abc" "bca" "cab" "abc")
    assert [semantic for _name, semantic in timed] == [False, True] * 12  # lexical, then hybrid, per call
    assert set(out) == {"a", "b", "c"} and all(r["semantic"] for r in out.values())

"""A lexical question whose words a running `kyb mcp` (stdio) has not been asked yet, checkouts side by
side: the door reads each new word's postings once per index state (search/bm25.py), on the answering
thread, so a new question costs more than the same question asked again (issue 38).

    python bench/bench_cold_words.py --store <copy of a bench/gen_store.py 10000 store> /work/main . [--reps 6]
    … --cyrillic   # the store's Cyrillic words too (stemmed to prefixes: never scored from postings)

Words: the store's words held by over 1000 current versions, Latin letters only unless --cyrillic,
sorted; nine warm a server (three questions, each asked twice: a state's postings are kept from its
second answer), the next ones make questions of three words each, asked once (cold) and once more
(warm). Each rep starts one new `kyb mcp` per checkout, the checkouts' order alternating. Server CPU
a call from /proc schedstat (all threads, bench_warm.cpu_of); the hits' keys in order are compared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_warm import BASE, Stdio  # noqa: E402


def questions(store: Path, cyrillic: bool) -> tuple[list[str], list[str]]:
    """(warm-up questions, cold questions) of the store's common words (see the module docstring)."""
    import apsw

    conn = apsw.Connection(str(store / ".git" / "kyb" / "index.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.kyb_rows USING fts5vocab(main, fts_now, row)")
        words = [t for (t,) in conn.execute("SELECT term FROM temp.kyb_rows WHERE doc > 1000 ORDER BY term")
                 if t.isalpha() and (cyrillic or t.isascii())]
    finally:
        conn.close()
    three = [" ".join(words[i:i + 3]) for i in range(0, len(words) - 2, 3)]
    return three[:3], three[3:]


class Server(Stdio):
    """One `kyb mcp` over stdio of one checkout (bench_warm.Stdio, run from the checkout)."""

    def __init__(self, checkout: Path, store: Path) -> None:
        home = BASE / "home"
        env = {k: v for k, v in os.environ.items()
               if k not in ("KYB_STORE", "KYB_SERVE_TOKEN", "PYTHONDONTWRITEBYTECODE")}
        env.update(PYTHONPATH=str(checkout), KYB_DEADLINES="off", HOME=str(home), XDG_CACHE_HOME=str(home / "cache"),
                   XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"), KYB_FSYNC="off",
                   KYB_BACKGROUND="off")
        super().__init__(store, env, cwd=checkout)

    def ask(self, text: str) -> list[str]:
        return [h["key"] for h in self.query(text, False)["hits"]]


def main() -> None:
    from bench.bench_warm import cpu_of

    ap = argparse.ArgumentParser()
    ap.add_argument("checkouts", nargs=2, type=Path)
    ap.add_argument("--store", type=Path, required=True, help="an indexed store (only read)")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--cyrillic", action="store_true", help="the store's Cyrillic words too")
    a = ap.parse_args()
    warm_qs, cold_qs = questions(a.store, a.cyrillic)
    checkouts = [c.resolve() for c in a.checkouts]
    res = {c: {"cold": [], "cold_wall": [], "warm": [], "keys": [], "cold_cyrillic": [], "warm_cyrillic": []}
           for c in checkouts}
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]), flush=True)
    for rep in range(a.reps):
        for co in (checkouts if rep % 2 == 0 else checkouts[::-1]):
            server = Server(co, a.store)
            try:
                for q in warm_qs + warm_qs:
                    server.ask(q)
                for kind in ("cold", "warm"):
                    for q in cold_qs:
                        c0, t0 = cpu_of(server.proc.pid), time.perf_counter()
                        keys = server.ask(q)
                        wall, cpu = time.perf_counter() - t0, cpu_of(server.proc.pid) - c0
                        res[co][kind].append(cpu * 1000)
                        if not q.isascii():
                            res[co][f"{kind}_cyrillic"].append(cpu * 1000)
                        if kind == "cold":
                            res[co]["cold_wall"].append(wall * 1000)
                        if rep < 2:
                            res[co]["keys"].append(keys)
            finally:
                server.close()
    for co, r in res.items():
        print(f"{co}: new words CPU/call p50 {statistics.median(r['cold']):.2f} ms, mean {statistics.mean(r['cold']):.2f}"
              f" (wall p50 {statistics.median(r['cold_wall']):.2f}); asked again CPU p50 {statistics.median(r['warm']):.2f}"
              f" ms  ({len(r['cold'])} questions of 3 new words)")
        if r["cold_cyrillic"]:
            print(f"    of them Cyrillic (stemmed to prefixes): new CPU p50 {statistics.median(r['cold_cyrillic']):.2f} ms,"
                  f" asked again {statistics.median(r['warm_cyrillic']):.2f} ms  ({len(r['cold_cyrillic'])} questions)")
    mine, theirs = (res[c]["keys"] for c in checkouts)
    print(f"answers (keys in order) differing: {sum(x != y for x, y in zip(mine, theirs))} of {len(mine)}")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()

"""The three warm doors of one or more checkouts, interleaved in one run: stdio `kyb mcp`, GET /search
and POST /mcp of `kyb serve`, a lexical (or, --hybrid, a new hybrid) question each, p50 wall and the
server's CPU a call, and how long its threads stood runnable waiting for a core (schedstat's second
field, summed over threads): wall above CPU that is not that wait is time the answer was blocked.

    python bench/bench_doors_ab.py --store /tmp/kyb-bench-warm/store-108 /work/main /work/wt-x
    python bench/bench_doors_ab.py --store S /work/main /work/main+/tmp/extra-site   # a checkout + a path
    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_doors_ab.py --hybrid --store /tmp/kyb-10k A B   # hybrid

--hybrid asks every call a text no door was asked before (the checkout, door and call in it: the
models' query cache is shared on disk), so each answer runs both models, as bench_warm.py's do.

Why: what the HTTP doors cost over stdio for the same answer (issue 38) is a few tenths of a ms in a
3 ms figure, under the noise of two runs taken apart on a shared 2-core box; side by side, call
after call, with CPU from /proc schedstat (all threads), it shows. Each checkout's servers run with
cwd and PYTHONPATH at the checkout (`A+B` puts B on PYTHONPATH after A, e.g. a dir holding
httptools to try uvicorn's C parser). The order of the checkouts alternates every round.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_warm import Stdio  # noqa: E402

QUESTIONS = ["postgres replica failover", "checkout latency timeout", "where are backups kept"]
KINDS = ("stdio", "search", "mcp")


def sched_of(pid: int) -> tuple[float, float]:
    """(CPU seconds, seconds runnable but waiting for a core), summed over the process's threads."""
    run = wait = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = open(f"/proc/{pid}/task/{t}/schedstat").read().split()
        except OSError:  # a thread that ended meanwhile
            continue
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run / 1e9, wait / 1e9


class Doors:
    """One checkout's `kyb serve` (keep-alive connection) and `kyb mcp` (raw JSON-RPC lines)."""

    def __init__(self, spec: str, store: str, n: int = 0) -> None:
        self.spec, self.n, cwd = spec, n, spec.split("+")[0]
        self.last_http = 0.0
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        env["PYTHONPATH"] = spec.replace("+", os.pathsep)
        self.web = subprocess.Popen([sys.executable, "-m", "kyb_cli", "serve", "--store", store, "--port", "0"],
                                    cwd=cwd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert self.web.stderr is not None
        while not (m := re.search(r"listening on http://[^:]+:(\d+)", line := self.web.stderr.readline())):
            if not line:
                raise SystemExit(f"{spec}: kyb serve did not start")
        self.port = int(m.group(1))
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port)
        self.stdio = Stdio(Path(store), env, Path(cwd))  # bench_warm's raw JSON-RPC lines, initialized

    def pid(self, kind: str) -> int:
        return self.stdio.proc.pid if kind == "stdio" else self.web.pid

    def ask(self, kind: str, i: int, hybrid: bool = False) -> None:
        q = QUESTIONS[i % len(QUESTIONS)]
        if hybrid:  # a new text: no cached question vector (the cache is shared by every process)
            q += f" {os.getpid()}-{self.n}-{kind}-{i}"
        if kind == "stdio":
            if not self.stdio.query(q, hybrid).get("semantic") and hybrid:
                raise SystemExit(f"{self.spec} stdio: no semantic side (set KYB_MODEL)")
            return
        if self.last_http and time.monotonic() - self.last_http > 4:  # uvicorn drops a keep-alive idle 5 s
            self.conn.close()  # (the other checkouts' model loads in --hybrid's warm-up): a new connection
        headers = {"Host": f"localhost:{self.port}"}
        if kind == "search":
            self.conn.request("GET", f"/search?q={quote(q)}&semantic={str(hybrid).lower()}", headers=headers)
        else:
            body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "query", "arguments": {"text": q, "semantic": hybrid}}}).encode()
            self.conn.request("POST", "/mcp", body=body, headers={
                **headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        resp = self.conn.getresponse()
        raw = resp.read()
        self.last_http = time.monotonic()
        if resp.status != 200:
            raise SystemExit(f"{self.spec} {kind}: {resp.status} {raw[:200]!r}")

    def close(self) -> None:
        self.conn.close()
        self.web.send_signal(signal.SIGINT)
        self.stdio.close()
        self.web.wait(20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkouts", nargs="+", help="checkout dirs (cwd and PYTHONPATH of its servers); A+B adds B")
    ap.add_argument("--store", required=True, help="an indexed store (bench_warm.py's store-108, a gen_store copy)")
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--hybrid", action="store_true", help="hybrid questions, each a new text (needs KYB_MODEL)")
    a = ap.parse_args()
    print("load", os.getloadavg(), flush=True)
    doors = [Doors(c, a.store, n) for n, c in enumerate(a.checkouts)]
    wall = {(d.spec, k): [] for d in doors for k in KINDS}
    cpu = {(d.spec, k): [] for d in doors for k in KINDS}
    queued = {(d.spec, k): [] for d in doors for k in KINDS}
    try:
        for i in range(5):  # warm: the first /mcp call loads the SDK
            for d in doors:
                for k in KINDS:
                    d.ask(k, i, a.hybrid)
        for i in range(a.runs):
            for d in (doors if i % 2 == 0 else doors[::-1]):
                for k in KINDS:
                    (c0, q0), t0 = sched_of(d.pid(k)), time.perf_counter()
                    d.ask(k, i + 10, a.hybrid)
                    wall[(d.spec, k)].append(time.perf_counter() - t0)
                    c1, q1 = sched_of(d.pid(k))
                    cpu[(d.spec, k)].append(c1 - c0)
                    queued[(d.spec, k)].append(q1 - q0)
    finally:
        for d in doors:
            d.close()
    for (spec, k), xs in wall.items():
        print(f"{spec:28} {k:7} wall p50 {statistics.median(xs) * 1000:6.3f} ms   "
              f"cpu p50 {statistics.median(cpu[(spec, k)]) * 1000:6.3f} mean {statistics.mean(cpu[(spec, k)]) * 1000:6.3f} ms   "
              f"waited for a core {statistics.mean(queued[(spec, k)]) * 1000:6.3f} ms")
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()

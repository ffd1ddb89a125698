"""One `kyb add` of a new key beside the background vector filler (issue 39): wall seconds, p50 and
p95, checkouts A and B alternating in one run, each on its own copy of the store.

    KYB_MODEL=/work/shared/models/multilingual-e5-small python bench/bench_write_filler.py \\
        --side /path/to/old/checkout:/tmp/copyA --side .:/tmp/copyB --rounds 10

Before each write, that side's filler is started (the other side's stopped: one filler at a time,
as a user has) and runs until it has committed a batch, then a random 0-3 s more, so writes land
at any point of its cycle. Each side's embedding cache is a new empty directory, so the filler
embeds (copies of a store without vectors have minutes of work). It writes to the copies.
`--both`: both fillers run throughout, so a write also meets what the filler does after the last
write (the restarted filler of the default redoes its start-up before the write instead).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid


class Side:
    def __init__(self, spec: str, cache: str) -> None:
        code, store = spec.split(":", 1)
        self.code, self.store = os.path.abspath(code), os.path.abspath(store)
        self.env = {**os.environ, "PYTHONPATH": self.code, "KYB_STORE": self.store, "XDG_CACHE_HOME": cache,
                    "KYB_DEADLINES": "off", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@kyb.invalid",
                    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@kyb.invalid"}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.filler: subprocess.Popen | None = None
        self.walls: list[float] = []
        self.keep = False

    def status(self) -> dict:
        try:
            with open(os.path.join(self.store, ".git", "kyb", "filler.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def start(self) -> None:
        if self.filler is not None and self.filler.poll() is None and self.keep:
            return
        if self.filler is None or self.filler.poll() is not None:
            self.filler = subprocess.Popen([sys.executable, "-m", "kyb_cli.core.index.filler", self.store],
                                           env=self.env, cwd=self.store, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, start_new_session=True)
        started = time.time()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # a batch committed by this filler
            s = self.status()
            if s.get("stage") == "vectors" and s.get("pid") == self.filler.pid and s.get("updated_at", 0) >= int(started):
                return
            time.sleep(0.1)
        raise SystemExit(f"{self.store}: the filler did not commit a batch in 120 s")

    def stop(self) -> None:
        if self.filler is not None and self.filler.poll() is None:
            self.filler.send_signal(signal.SIGTERM)
            self.filler.wait()

    def write(self, n: int) -> None:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", f"bench-filler-{uuid.uuid4().hex[:8]}-{n}",
                        "--title", f"Bench write {n}", "--body", f"port {9000 + n} on node-{n % 5}"],
                       env=self.env, check=True, capture_output=True)
        self.walls.append(time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", action="append", required=True, help="CHECKOUT:STORE (give two)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--both", action="store_true", help="both fillers run throughout (as one user's writes "
                    "in a row beside one filler; each side's writes also share the cores with the other's filler)")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kyb-bench-filler-")
    sides = [Side(spec, os.path.join(root, f"cache{i}")) for i, spec in enumerate(args.side)]
    for side in sides:
        side.keep = args.both
    try:
        for r in range(args.rounds):
            for side in sides if r % 2 == 0 else sides[::-1]:
                for other in sides:
                    if other is not side and not args.both:
                        other.stop()
                side.start()
                time.sleep(random.uniform(0, 3))
                side.write(r)
    finally:
        for side in sides:
            side.stop()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for side in sides:
        w = sorted(side.walls)
        print(f"{side.code} on {side.store}: kyb add beside the filler p50 {statistics.median(w):.3f} s, "
              f"p95 {w[max(0, round(0.95 * len(w)) - 1)]:.3f} s, max {w[-1]:.3f} ({len(w)} writes; load {load})")


if __name__ == "__main__":
    main()

"""`python bench/bench_serve.py [--keys N] [--store PATH] [--runs R]`: HTTP latency of `kyb serve`.

Starts a real `kyb serve --port 0` on a generated store (bench/gen_store.py, cached) or on
--store, warms every route once (the first read may build the index), then times R requests per
route over one keep-alive connection: what the console pays for each view. Prints p50/p95 in ms
and the load average (the machine may be shared: read the figures with it).

    python bench/bench_serve.py --starts 9 --runs 0   # also a start: until ready, and CPU start to stop

`--starts N` first starts and stops the server N times on the store: p50 wall until the `listening`
line and p50 CPU of the whole process (start, one GET /healthz, SIGTERM), beside `python -c pass`.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--starts", type=int, default=0, help="also time N starts (ready wall, CPU to stop)")
    args = parser.parse_args()
    if args.store is None:
        import json

        out = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_store.py"), str(args.keys)],
                             capture_output=True, text=True, check=True).stdout
        args.store = Path(json.loads(out.strip().splitlines()[-1])["path"])
    from tests.support.serve_proc import Served

    env = {k: v for k, v in os.environ.items() if k not in ("KYB_SERVE_TOKEN",)}
    env.setdefault("KYB_DEADLINES", "off")
    if args.starts:
        starts(args.store, env, args.starts)
    server = Served.start(args.store, env=env, timeout=600)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)

        def get(path: str) -> tuple[int, bytes]:
            conn.request("GET", path, headers={"Host": f"localhost:{server.port}"})
            resp = conn.getresponse()
            return resp.status, resp.read()

        import json

        status, raw = get("/search?q=&kind=knowledge&limit=1&recent=true")
        key = json.loads(raw)["hits"][0]["key"] if status == 200 else "missing"
        health = json.loads(get("/healthz")[1])
        from urllib.parse import quote

        mid = quote(health.get("first_commit_at") or "2026-01-01")
        routes = [
            "/", "/static/js/app.js", "/healthz", "/deadlines",
            "/search?q=checkout%20deploy&semantic=false",
            "/search?q=checkout&history=true&semantic=false",
            f"/search?q=checkout&as_of={mid}&semantic=false",
            "/search?q=&limit=50",
            "/tasks?limit=50", "/incidents?limit=50", "/tags",
            f"/knowledge/{key}", f"/knowledge/{key}/history", f"/knowledge/{key}/diff",
        ]
        result: dict = {"routes": {}}
        for path in routes:
            t0 = time.perf_counter()
            status, _ = get(path)
            first = (time.perf_counter() - t0) * 1000
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                status, _ = get(path)
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            p50 = statistics.median(times)
            print(f"{path:60s} {status}  first {first:8.1f}  p50 {p50:7.1f}  p95 {p95:7.1f} ms")
            result["routes"][path] = {"status": status, "first_ms": round(first, 1), "p50_ms": round(p50, 1),
                                      "p95_ms": round(p95, 1)}
        counts = health.get("counts", {})
        print(f"store {args.store}: {counts.get('knowledge')} knowledge, {counts.get('task')} tasks, "
              f"{counts.get('incident')} incidents, {counts.get('commits')} commits; "
              f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        result.update(counts=counts, load=os.getloadavg()[0])
        print(json.dumps(result))
    finally:
        server.stop()


def _children_cpu() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def starts(store: Path, env: dict, n: int) -> None:
    """n starts of `kyb serve`, interleaved with `python -c pass`: what every start of a server
    costs (a test that starts one, an agent's session, a restart)."""
    from tests.support.serve_proc import Served

    ready, cpu, floor = [], [], []
    Served.start(store, env=env, timeout=600).stop()  # the index is built before timing
    for _ in range(n):
        c0, t0 = _children_cpu(), time.perf_counter()
        server = Served.start(store, env=env, timeout=600)
        ready.append((time.perf_counter() - t0) * 1000)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
        conn.request("GET", "/healthz", headers={"Host": f"localhost:{server.port}"})
        conn.getresponse().read()
        server.stop()
        cpu.append((_children_cpu() - c0) * 1000)
        c0 = _children_cpu()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floor.append((_children_cpu() - c0) * 1000)
    print(f"start: ready p50 {statistics.median(ready):.0f} ms, CPU start to stop p50 {statistics.median(cpu):.0f} ms "
          f"(python -c pass {statistics.median(floor):.0f} ms); {n} starts, load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()

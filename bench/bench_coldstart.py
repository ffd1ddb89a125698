"""Cold start: clone a store, ask at once, and time each stage until history and catch-up are done.

    python bench/bench_coldstart.py                      # 1k and 10k keys (stores cached by gen_store.py)
    python bench/bench_coldstart.py --keys 1000 --runs 11
    KYB_MODEL=… python bench/bench_coldstart.py --hybrid # also hybrid p50 while vectors are pending

Stages, each a separate `python -m kyb_cli …` process timed from start to exit (own XDG dirs, so no
vector cache from earlier runs):
- clone            `git clone file://…` (a real clone: objects go through the pack protocol);
- first_query      the first lexical `kyb query` on the clone (builds HEAD's snapshot, starts the filler);
- history_wait     the first `kyb query --history` right after: it waits for the background filler;
- history_done     time from the end of the first query until the filler swapped the full history in;
- lexical p50/p95  `kyb query … --no-semantic` on the complete index, next to `python -c pass`;
- hybrid p50/p95   (--hybrid) with the model, while the filler is still embedding passages;
- catch_up_100     `fresh()` after 100 new commits on top (in-process, as bench_index.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_index import add_commits  # noqa: E402
from gen_store import generate, stats  # noqa: E402

WORK = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bench-coldstart"
WORDS = ("checkout", "orders", "payments", "gateway", "cache", "redis", "kafka", "deploy", "ingress",
         "latency", "timeout", "retry", "queue", "worker", "backup", "replica", "shard", "schema", "token")


def _env(path: Path, home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, KYB_STORE=str(path), KYB_DEADLINES="off", XDG_CACHE_HOME=str(home / "cache"),
               XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"), **extra)
    for name in ("KYB_READS", "KYB_STAGE_AT", "PYTHONDONTWRITEBYTECODE"):  # measure .pyc runs, as installed
        env.pop(name, None)
    env.setdefault("KYB_BACKGROUND", "on")
    if env["KYB_BACKGROUND"] == "off":
        env["KYB_BACKGROUND"] = "on"  # the bench measures the background filler
    return env


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{cmd} failed: {res.stderr}")
    return time.perf_counter() - t, res


def _kyb(env: dict[str, str], *args: str) -> tuple[float, dict]:
    took, res = _run([sys.executable, "-m", "kyb_cli", *args], env)
    return took, json.loads(res.stdout)


def _pcts(samples: list[float]) -> dict:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))]
    return {"p50_ms": round(statistics.median(samples) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def _history_complete(path: Path) -> bool:
    import apsw

    db = path / ".git" / "kyb" / "index.sqlite"
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            row = conn.execute("SELECT v FROM meta WHERE k = 'history'").fetchone()
        finally:
            conn.close()
    except apsw.Error:
        return False
    return row is not None and row[0] == "complete"


def _filler(path: Path) -> dict:
    try:
        return json.loads((path / ".git" / "kyb" / "filler.json").read_text())
    except (OSError, ValueError):
        return {}


def _stop_filler(path: Path) -> None:
    """Stop the filler this run started (its pid is in the lock file it holds)."""
    import fcntl
    import signal

    lock = path / ".git" / "kyb" / "filler.lock"
    if not lock.exists():
        return
    fd = os.open(lock, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return  # not held: no filler running
        except OSError:
            pid = os.pread(fd, 32, 0).decode().strip()
        if pid.isdigit():
            os.kill(int(pid), signal.SIGTERM)
    finally:
        os.close(fd)


def _warm_bytecode(home: Path, env: dict[str, str]) -> None:
    """Run the same code once on a throw-away store, so the .pyc files exist before the timings."""
    scratch = home / "scratch"
    subprocess.run(["git", "init", "-q", "-b", "main", str(scratch)], check=True)
    subprocess.run(["git", "-C", str(scratch), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)
    warm = dict(env, KYB_STORE=str(scratch), KYB_STAGE_AT="0", KYB_BACKGROUND="off")
    _run([sys.executable, "-m", "kyb_cli", "query", "x", "--no-semantic"], warm)
    _run([sys.executable, "-m", "kyb_cli", "query", "x", "--history", "--no-semantic"], warm)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def bench(keys: int, runs: int, hybrid: bool) -> dict:
    cached = generate(keys)
    info = stats(cached)
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{keys}"
    if path.exists():
        shutil.rmtree(path)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=WORK))
    out: dict = {"keys": keys, "commits": info["commits"], "versions": info["versions"], "load_before": _load()}
    # A local clone (the pack is linked, not rebuilt: `git clone file://` spends a minute at 10k keys
    # repacking, which is the remote's cost, not kyb's).
    took, _ = _run(["git", "clone", "-q", str(cached), str(path)], dict(os.environ))
    out["clone_s"] = round(took, 3)
    env = _env(path, home)
    if not hybrid:
        env["KYB_MODEL"] = str(home / "no-model")  # lexical stages: no model, no vector filling
    _warm_bytecode(home, env)
    took, first = _kyb(env, "query", "checkout port 9090", "--no-semantic")
    end_first = time.perf_counter()
    out["first_query_s"] = round(took, 3)
    out["first_query_history_complete"] = first.get("history_complete", True)
    took, hist = _kyb(env, "query", "checkout port 9090", "--history", "--no-semantic")
    out["history_wait_s"] = round(took, 3)
    deadline = time.monotonic() + 600
    while not _history_complete(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    out["history_done_s"] = round(time.perf_counter() - end_first, 3)
    out["history_complete_in_answer"] = "history_complete" not in hist
    _kyb(env, "query", "warm", "--no-semantic")
    base = [_run([sys.executable, "-c", "pass"], env)[0] for _ in range(runs)]
    lexical = [_kyb(env, "query", f"{WORDS[i % len(WORDS)]} port 9090", "--no-semantic")[0] for i in range(runs)]
    out["python_pass"] = _pcts(base)
    out["lexical"] = _pcts(lexical)
    out["lexical_over_python"] = round(out["lexical"]["p50_ms"] / out["python_pass"]["p50_ms"], 2)
    if hybrid:
        _kyb(env, "query", "warm up the helper")  # starts the warm helper (query vectors only)
        samples, pending = [], []
        for i in range(runs):
            took, d = _kyb(env, "query", f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} {i}")
            samples.append(took)
            pending.append(d.get("pending_vectors", 0))
        out["hybrid"] = _pcts(samples) | {"pending_vectors_first": pending[0], "pending_vectors_last": pending[-1]}
        out["hybrid_over_lexical"] = round(out["hybrid"]["p50_ms"] / out["lexical"]["p50_ms"], 2)
        out["filler"] = _filler(path)
        _stop_filler(path)
    last = int(subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%ct"], capture_output=True,
                              text=True).stdout.strip() or "0")
    add_commits(path, 100, last + 60)
    os.environ["KYB_BACKGROUND"] = "off"
    from kyb_cli.core.index.fresh import fresh

    t = time.perf_counter()
    f = fresh(path)
    out["catch_up_100_s"] = round(time.perf_counter() - t, 3)
    f.conn.close()
    out["load_after"] = _load()
    shutil.rmtree(home, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, action="append")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--hybrid", action="store_true", help="also hybrid queries while vectors are pending (KYB_MODEL)")
    args = ap.parse_args()
    print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}))
    for keys in args.keys or [1000, 10000]:
        print(json.dumps(bench(keys, args.runs, args.hybrid)), flush=True)


if __name__ == "__main__":
    main()

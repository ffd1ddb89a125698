"""Index benchmark: full rebuild, catch-up after 100 commits, `kyb query` end to end per mode.

    python bench/bench_index.py               # 1k and 10k keys (stores cached by gen_store.py)
    python bench/bench_index.py --keys 1000 --runs 21

Each query is a separate `python -m kyb_cli query …` process, timed from start to exit, with the
index already current (the usual case); p50 and p95 over --runs runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_store import generate, stats  # noqa: E402

WORK = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bench-work"


def add_commits(path: Path, n: int, start: int) -> None:
    """n new commits on HEAD (updates, new keys, a retraction), written as a plain git client would."""
    import pygit2

    from kyb_cli.core.canon.tree import BLOB_MODE, apply_changes
    from kyb_cli.core.records.keys import key_of_path, path_of_key
    from kyb_cli.core.records.model import Record

    repo = pygit2.Repository(str(path))
    keys: list[str] = []  # knowledge keys at HEAD, in either shape (a flat store stays flat: no move)
    for entry in repo.head.peel(pygit2.Commit).tree["knowledge"]:
        children = [e.name for e in repo[entry.id]] if entry.type_str == "tree" else [entry.name]
        prefix = f"knowledge/{entry.name}/" if entry.type_str == "tree" else "knowledge/"
        keys += [k for k in (key_of_path(prefix + c) for c in children) if k]
        if len(keys) >= n:
            break
    flat = not any(e.type_str == "tree" for e in repo.head.peel(pygit2.Commit).tree["knowledge"])

    def where(key: str) -> str:
        return f"knowledge/{key}.md" if flat else path_of_key(key)

    for i in range(n):
        head = repo.head.peel(pygit2.Commit)
        if i % 10 == 9:
            change = {where(keys[i]): None}
        else:
            key = f"bench-new-{i}" if i % 3 == 0 else keys[i]
            text = Record(key=key, title=f"Bench {i}", body=f"catch-up commit {i} port 7070").to_markdown()
            change = {where(key): (repo.create_blob(text.encode()), BLOB_MODE)}
        tree = apply_changes(repo, head.tree, change)
        sig = pygit2.Signature("bench", "bench@localhost", start + i, 0)
        repo.create_commit("HEAD", sig, sig, f"bench commit {i}\n", tree, [head.id])


def timed_query(path: Path, args: list[str], runs: int) -> dict:
    env = dict(os.environ, KYB_STORE=str(path))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed kyb runs from .pyc files: measure that
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "kyb_cli", "query", *args], env=env,
                             capture_output=True, text=True)
        samples.append((time.perf_counter() - t) * 1000)
        if res.returncode != 0:
            raise SystemExit(f"query {args} failed: {res.stderr}")
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))]
    return {"p50_ms": round(statistics.median(samples), 1), "p95_ms": round(p95, 1),
            "count": json.loads(res.stdout)["count"]}


def bench(keys: int, runs: int) -> dict:
    from kyb_cli.core.index.fresh import fresh, rebuild

    cached = generate(keys)
    path = WORK / f"{keys}"
    if path.exists():
        shutil.rmtree(path)
    shutil.copytree(cached, path, symlinks=True)
    info = stats(cached)
    work = rebuild(path)
    out = {"keys": keys, "commits": info["commits"], "versions": work["versions"],
           "rebuild_s": work["seconds"], "versions_per_s": round(work["versions"] / work["seconds"])}
    last = int(json.loads(subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%ct"],
                                         capture_output=True, text=True).stdout or "0"))
    add_commits(path, 100, last + 60)
    t = time.perf_counter()
    f = fresh(path)
    out["catch_up_100_s"] = round(time.perf_counter() - t, 3)
    out["catch_up_commits"] = f.work.get("commits")
    f.conn.close()
    mid = last - (last - 1_735_689_600) // 2
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mid))
    start = time.strftime("%Y-%m-%d", time.gmtime(mid - 30 * 86400))
    modes = {
        "current": ["checkout port 9090", "--no-semantic"],
        "history": ["checkout port 9090", "--history"],
        "as_of": ["checkout port 9090", "--as-of", iso],
        "changed_between": ["checkout port 9090", "--changed-between", start, iso],
        "empty_listing": [],
        "filtered": ["деплой", "--kind", "task", "--status", "open"],
    }
    timed_query(path, ["warm"], 2)
    out["query"] = {name: timed_query(path, args, runs) for name, args in modes.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, action="append")
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
               "cpu": _cpu_name()}
    print(json.dumps({"machine": machine}))
    for keys in args.keys or [1000, 10000]:
        print(json.dumps(bench(keys, args.runs)), flush=True)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()

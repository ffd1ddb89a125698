"""Faults benchmark: concurrent writers and random kills, and what (if anything) was lost.

    python bench/bench_faults.py                         # 8 writers x 200 writes, 100 kills
    python bench/bench_faults.py --writers 4 --writes 50 --kills 20

Part 1, concurrency: W writer processes each make N writes (their own keys plus one shared key,
with a retraction now and then) while a querier and a reindexer run beside them. Each writer prints
every acknowledged write (key, sha) as it gets it. Then: every acknowledged sha must be a commit
reachable from HEAD that wrote that key, the last acknowledged version of each writer's own keys is
HEAD's, `git fsck` is clean, and the index equals a rebuild (`kyb export` before and after `kyb reindex`).

Part 2, kills: rounds of a writer (or a `kyb reindex`) SIGKILLed at a random moment; after each, the
acknowledged writes are all in Git, fsck is clean, the next write heals the working tree.

One JSON line per part on stdout: counts, `lost` (acknowledged but not in Git: must be 0), `broken`
(invariant failures: must be 0), seconds, and the machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WRITER = r"""
import json, sys
from kyb_cli import api
path, name, writes = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = api.open_store(path)
who = api.attribution("bench")
print("ready", flush=True)
for i in range(writes):
    key = "shared" if i % 4 == 3 else f"{name}-{i % 7}"
    try:
        if i % 10 == 9:
            r = api.retract_knowledge(store, key, f"{name} {i}", who)
        else:
            r = api.add_knowledge(store, key=key, title=key, body=f"{name} {i}", tags=[], refs=[], attribution=who)
    except api.KybError as exc:
        print(json.dumps({"error": exc.message, "exit": exc.exit_code}), flush=True)
        continue
    if r.changed:
        print(json.dumps({"key": key, "sha": r.sha, "action": r.action, "i": i}), flush=True)
    else:
        print(json.dumps({"unchanged": key, "i": i}), flush=True)
"""

def git(store: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True,
                          check=check).stdout


def kyb(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KYB_STORE": str(store), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kyb_cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def spawn(args: list[str], store: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "KYB_STORE": str(store), "PYTHONPATH": str(ROOT), "KYB_LOCK_TIMEOUT": "120"}
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def ready(proc: subprocess.Popen[str]) -> None:
    """Wait for the child's `ready` line, reading its pipe a byte at a time: a buffered readline may
    take the lines after it too (a first write answered at once), and communicate(), which reads the
    pipe itself, would never see them: an acknowledged write counted as unanswered."""
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(proc.stdout.fileno(), 1)
        if not byte:
            break
        line += byte
    assert line.strip() == b"ready", line


def acks(out: str) -> list[dict]:
    rows = []
    for line in out.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "sha" in row:
            rows.append(row)
    return rows


def lost_writes(store: Path, acknowledged: list[dict]) -> list[dict]:
    """Acknowledged writes whose commit is not reachable from HEAD or did not touch that key."""
    reachable = set(git(store, "rev-list", "HEAD").split())
    lost = []
    for row in acknowledged:
        if row["sha"] not in reachable:
            lost.append(row)
            continue
        subject = git(store, "log", "-1", "--format=%s", row["sha"]).strip()
        if not subject.endswith(f" {row['key']}"):
            lost.append(row)
    return lost


def fsck_ok(store: Path) -> bool:
    return subprocess.run(["git", "-C", str(store), "fsck", "--strict", "--no-dangling"],
                          capture_output=True).returncode == 0


def worktree_ok(store: Path) -> bool:
    return git(store, "status", "--porcelain", "--untracked-files=all") == ""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def concurrency(work: Path, writers: int, writes: int) -> dict:
    store = work / "concurrency"
    assert kyb(store, "init", str(store)).returncode == 0
    started = time.perf_counter()
    procs = [spawn(["-c", WRITER, str(store), f"w{n}", str(writes)], store) for n in range(writers)]
    for p in procs:
        ready(p)
    side_errors, side_runs = [], 0
    while any(p.poll() is None for p in procs):
        for args in (("query", "bench"), ("reindex",) if side_runs % 5 == 4 else ("get", "shared")):
            res = kyb(store, *args)
            side_runs += 1
            if res.returncode not in (0, 1) or "internal error" in res.stderr:
                side_errors.append(res.stderr.strip()[:200])
    acknowledged, errors, unchanged, stderr_tails = [], [], 0, []
    for p in procs:
        out, err = p.communicate()
        acknowledged += acks(out)
        unchanged += out.count('"unchanged"')
        errors += [json.loads(line) for line in out.splitlines() if line.startswith('{"error"')]
        if err.strip():
            stderr_tails.append(err.strip()[-300:])
        if p.returncode != 0:
            errors.append({"error": err.strip()[-300:], "exit": p.returncode})
    seconds = time.perf_counter() - started
    lost = lost_writes(store, acknowledged)
    broken = []
    if not fsck_ok(store):
        broken.append("fsck")
    kyb(store, "add", "--key", "heal", "--title", "h", "--body", "heal")
    if not worktree_ok(store):
        broken.append("worktree")
    before = kyb(store, "export").stdout
    kyb(store, "reindex")
    if kyb(store, "export").stdout != before:
        broken.append("index differs from a rebuild")
    answered = len(acknowledged) + unchanged + len(errors)
    reported = {row["sha"] for row in acknowledged}
    written = [line for line in git(store, "log", "--format=%H %s").splitlines()
               if line.split(" ", 1)[1].split(" ")[-1].split("-")[0] in {f"w{n}" for n in range(writers)} | {"shared"}]
    return {"part": "concurrency", "writers": writers, "writes_each": writes,
            "acknowledged": len(acknowledged), "unchanged": unchanged, "refused": len(errors),
            "unanswered": writers * writes - answered,
            "commits_not_acknowledged": sum(1 for line in written if line.split()[0] not in reported),
            "stderr": stderr_tails[:3], "lost": len(lost),
            "broken": broken, "side_runs": side_runs, "side_errors": side_errors[:5],
            "seconds": round(seconds, 1), "writes_per_second": round(len(acknowledged) / seconds, 1),
            "load": load(), "errors": errors[:5]}


def kills(work: Path, rounds: int, seed: int) -> dict:
    store = work / "kills"
    assert kyb(store, "init", str(store)).returncode == 0
    rng = random.Random(seed)
    acknowledged, broken, killed = [], [], {"writer": 0, "reindex": 0}
    started = time.perf_counter()
    for n in range(rounds):
        what = "reindex" if n % 4 == 3 else "writer"
        if what == "writer":
            proc = spawn(["-c", WRITER, str(store), f"k{n}", "100000"], store)
            ready(proc)
        else:
            proc = spawn(["-m", "kyb_cli", "reindex"], store)
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        out, _err = proc.communicate()
        killed[what] += 1
        acknowledged += acks(out)
        if not fsck_ok(store):
            broken.append(f"round {n}: fsck")
        heal = kyb(store, "add", "--key", "heal", "--title", "h", "--body", f"heal {n}")
        if heal.returncode != 0:
            broken.append(f"round {n}: heal write: {heal.stderr.strip()[:200]}")
        elif not worktree_ok(store):
            broken.append(f"round {n}: worktree")
        query = kyb(store, "query", "heal")
        if query.returncode != 0:
            broken.append(f"round {n}: query: {query.stderr.strip()[:200]}")
    lost = lost_writes(store, acknowledged)
    kyb_dir = store / ".git" / "kyb"
    leftovers = [p.name for p in kyb_dir.iterdir() if ".tmp" in p.name] if kyb_dir.exists() else []
    return {"part": "kills", "rounds": rounds, "killed": killed, "acknowledged": len(acknowledged),
            "lost": len(lost), "broken": broken[:10], "temp_files_left": leftovers,
            "seconds": round(time.perf_counter() - started, 1), "load": load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    base = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir()))
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kyb-bench-faults-", dir=base))
    try:
        for row in (concurrency(work, args.writers, args.writes), kills(work, args.kills, args.seed)):
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

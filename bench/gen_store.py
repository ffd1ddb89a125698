"""Generate a realistic kyb store: N keys, mean ~3.7 versions per key, 3/4 of keys with two or more
(as measured in seed 002), some retractions (and re-adds), archived incidents and tasks.

One write = one commit, as kyb makes them. Records are at their fanned-out paths
(`knowledge/<h>/<key>.md`, keys.path_of_key; issue 39), so a commit rewrites the root, a kind's tree
of 256 entries and one small bucket: one commit per version is feasible at 100k keys. `--flat` makes
a store of the old flat shape (`knowledge/<key>.md`), to measure `kyb migrate`. Objects are streamed
into `git fast-import` (one delta-compressed pack). Stores are cached under
/tmp/kyb-bench-stores/fan-<n>-<seed> (flat: flat-<n>-<seed>) and reused.

    python bench/gen_store.py 10000            # prints the path and the version statistics
    python bench/gen_store.py 100000 --out /tmp/kyb-100k --progress
    python bench/gen_store.py 10000 --flat     # the old shape, for `kyb migrate`
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bench-stores"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kyb_cli.core.records.keys import old_path_of_key, path_of_key  # noqa: E402

WORDS = ("checkout orders payments billing gateway cache redis postgres kafka nats deploy rollout "
         "terraform helm ingress latency timeout retry queue worker cron backup replica shard index "
         "migration schema token auth session webhook export import metrics alert pager oncall").split()
RU = ("стрим деплой реестр пайплайн индекс докер кластер очередь таймаут миграция база сервис "
      "оформление заказа платёж узел порт запись чтение").split()
SERVICES = ("svc-checkout", "orders_api", "billing", "gateway", "auth", "search")


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS if rng.random() < 0.8 else RU) for _ in range(n)]
    words.insert(rng.randrange(len(words)), f"port {rng.choice((8080, 9090, 5432, 6379, 443))}")
    return " ".join(words).capitalize() + "."


def _n_versions(rng: random.Random) -> int:
    if rng.random() < 0.25:
        return 1
    return 2 + int(round(rng.expovariate(1 / 2.6)))


def _key(path: str) -> str:
    """The key a generated path names (its last component, flat or fanned out)."""
    return path.rsplit("/", 1)[-1][:-3]


def _record(key: str, rng: random.Random, v: int, final: bool = False) -> str:
    from kyb_cli.core.records.model import Record

    kind = "incident" if key.startswith("inc-") else "task" if key.startswith("task-") else "knowledge"
    fields: dict = {}
    if kind == "incident":
        fields = {"service": rng.choice(SERVICES), "severity": rng.choice(("low", "medium", "high")),
                  "status": "resolved" if final else "open", "detection": _text(rng, 5)}
        if final:
            fields["resolution"] = _text(rng, 8)
    elif kind == "task":
        fields = {"status": "done" if final else rng.choice(("open", "in_progress")),
                  "priority": rng.choice(("low", "medium", "high")), "assignee": rng.choice(("ann", "bob", "eve"))}
        if final:
            fields["resolution"] = _text(rng, 6)
    tags = sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 3))})
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).capitalize() + f" v{v}"
    body = "\n\n".join(_text(rng, rng.randint(10, 40)) for _ in range(rng.randint(1, 4)))
    return Record(key=key, title=title, body=body, tags=tags, **fields).to_markdown()


def plan(n: int, seed: int, flat: bool = False) -> list[tuple[str, str, str | None]]:
    """(path, verb, content or None for a deletion), in commit order."""
    rng = random.Random(seed)
    per_key: list[list[tuple[str, str, str | None]]] = []
    for i in range(n):
        r = rng.random()
        key = f"inc-{i:06d}-outage" if r < 0.1 else f"task-{i:06d}-work" if r < 0.2 else f"k{i:06d}-{rng.choice(WORDS)}"
        path = old_path_of_key(key) if flat else path_of_key(key)
        d = path.split("/")[0]
        nv = _n_versions(rng)
        steps: list[tuple[str, str, str | None]] = []
        archived = d != "knowledge" and rng.random() < 0.5
        for v in range(nv):
            steps.append((path, "add" if v == 0 else "update", _record(key, rng, v + 1, final=archived and v == nv - 1)))
        if archived:
            steps.append((path, "archive", None))
        elif d == "knowledge" and rng.random() < 0.04:
            steps.append((path, "retract", None))
            if rng.random() < 0.3:
                steps.append((path, "add", _record(key, rng, nv + 1)))
        per_key.append(steps)
    # Interleave keys while keeping each key's own order.
    order = [i for i, steps in enumerate(per_key) for _ in steps]
    rng.shuffle(order)
    cursor = [0] * n
    out = []
    for i in order:
        out.append(per_key[i][cursor[i]])
        cursor[i] += 1
    return out


def generate(n: int, seed: int = 1, path: Path | None = None, progress: bool = False, per_commit: int = 1,
             flat: bool = False) -> Path:
    """`per_commit` > 1: that many writes of distinct keys share a commit (as `kyb import` or a sync
    merge makes them). `flat`: the old shape (one tree of every key, rewritten by every commit: hours
    of fast-import at 100k keys one write a commit; batch it)."""
    name = f"{'flat' if flat else 'fan'}-{n}-{seed}" + ("" if per_commit == 1 else f"-x{per_commit}")
    path = path or CACHE / name
    if (path / ".git" / "kyb-bench-done").exists():
        return path
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    steps = plan(n, seed, flat)
    rng = random.Random(seed + 1)
    gaps = [rng.choice((0, 1, 5, 30, 120, 600, 3600)) for _ in range(len(steps) + 1)]
    gaps.reverse()  # popped from the end: the same draws, in the same order, as one choice per commit
    # From 2025-01-01, unless the history would run past 2026-01-01 (~622 s a commit: 100k keys one
    # write a commit span 7 years): then it starts earlier and ends there. A history dated in the
    # future would make every kyb write a commit older than its parent, and a clock skew a walk with
    # a hidden commit pays for with the whole history (libgit2's revwalk, walk.py: 4 s at 100k keys).
    when = min(1_735_689_600, 1_767_225_600 - sum(gaps))
    proc = subprocess.Popen(["git", "-C", str(path), "fast-import", "--quiet", "--done"],
                            stdin=subprocess.PIPE, stdout=sys.stderr if progress else None)
    out = proc.stdin
    assert out is not None

    def data(text: str) -> None:
        raw = text.encode()
        out.write(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(message: str, ops: list[bytes]) -> None:
        nonlocal when
        out.write(b"commit refs/heads/main\n")
        out.write(f"committer kyb <kyb@localhost> {when} +0000\n".encode())
        data(message)
        for op in ops:
            out.write(op)

    commit("kyb: init store\n", [])

    def op(path_: str, content: str | None) -> bytes:
        if content is None:
            return f"D {path_}\n".encode()
        raw = content.encode()
        return f"M 100644 inline {path_}\n".encode() + b"data %d\n" % len(raw) + raw + b"\n"

    batch: list[tuple[str, str, str | None]] = []
    in_batch: set[str] = set()

    def flush() -> None:
        nonlocal when
        in_batch.clear()
        if not batch:
            return
        when += gaps.pop()
        if len(batch) == 1:
            path_, verb, _c = batch[0]
            key = _key(path_)
            msg = f"kyb: {verb} {key}\n\nKyb-Action: {verb}\nKyb-Agent: bench\nKyb-Transport: cli\n"
        else:
            msg = f"kyb: import {len(batch)} records\n\nKyb-Action: import\nKyb-Agent: bench\nKyb-Transport: cli\n"
        commit(msg, [op(p, c) for p, _v, c in batch])
        batch.clear()

    n_commits = 1
    for n_done, step in enumerate(steps, 1):
        if progress and n_done % 10_000 == 0:
            out.write(f"progress {n_done}/{len(steps)} writes\n".encode())
        if len(batch) >= per_commit or step[0] in in_batch:
            flush()  # a batch never holds two versions of one key: each version keeps its commit
            n_commits += 1
        batch.append(step)
        in_batch.add(step[0])
    flush()
    out.write(b"done\n")
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "-C", str(path), "reset", "-q", "--hard", "main"], check=True)
    versions = sum(1 for _p, _v, c in steps if c is not None)
    (path / ".git" / "kyb-bench-done").write_text(json.dumps({"keys": n, "commits": n_commits + 1, "versions": versions,
                                                              "writes_per_commit": per_commit,
                                                              "shape": "flat" if flat else "fan-out"}))
    return path


def stats(path: Path) -> dict:
    return json.loads((path / ".git" / "kyb-bench-done").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("keys", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, help="where to build it (default: the cache directory)")
    ap.add_argument("--progress", action="store_true", help="report every 10,000 writes on stderr")
    ap.add_argument("--per-commit", type=int, default=1, help="writes of distinct keys per commit (default 1)")
    ap.add_argument("--flat", action="store_true", help="the old flat shape knowledge/<key>.md (to measure kyb migrate)")
    args = ap.parse_args()
    path = generate(args.keys, args.seed, args.out, args.progress, max(1, args.per_commit), args.flat)
    print(json.dumps({"path": str(path), **stats(path)}))


if __name__ == "__main__":
    main()

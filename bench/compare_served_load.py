"""served.load old vs new on real records: the same answers, and its µs a record (issue 39).

    PYTHONPATH=. .venv/bin/python bench/compare_served_load.py STORE --old ../base [--new .]
        [--records 5000] [--rounds 3] [--repeat 3]

STORE: a store's Git repository (read only: HEAD's first `--records` record blobs in key order, as
snapshot.py sorts them). Each checkout runs in its own subprocess (its own `kyb_cli`), old and new
alternating `--rounds` times; each round times `load` and `rows.version_rows` (the worker's whole
step) over every record, best of `--repeat`, in CPU µs a record. Every subprocess also prints the
sha256 of the JSON of its answers — `to_json()` of each record, or the refusal's class and
`.reason` — and the script fails when the old and new checkouts' answers differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def child(store: Path, records: int, repeat: int) -> dict:
    """In one checkout: the digest of load's answers, and the best µs a record of load and version_rows."""
    import hashlib
    import time

    from kyb_cli.core.index import gitlog, rows, snapshot
    from kyb_cli.core.records.keys import path_of_key
    from kyb_cli.core.records.served import load

    head = gitlog._git(store, "rev-parse", "HEAD").stdout.decode().strip()
    entries = sorted(snapshot.entries_of(snapshot.head_tree(store, head)))[:records]
    contents = gitlog.blobs(store, sorted({blob for _key, blob in entries}))
    items = [(path_of_key(key), contents[blob]) for key, blob in entries]
    pending = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]

    def answer(path, data):
        try:
            return load(path, data).to_json()
        except Exception as exc:  # noqa: BLE001 - the class is the answer
            return [type(exc).__name__, getattr(exc, "reason", str(exc))]

    digest = hashlib.sha256(json.dumps([answer(p, d) for p, d in items], default=repr).encode()).hexdigest()
    timings = {"load": [], "version_rows": []}
    for _ in range(repeat):
        t = time.process_time()
        for path, data in items:
            load(path, data)
        timings["load"].append(time.process_time() - t)
        t = time.process_time()
        rows.version_rows(pending, contents)
        timings["version_rows"].append(time.process_time() - t)
    return {"digest": digest, "records": len(items),
            "us": {k: min(v) / len(items) * 1e6 for k, v in timings.items()}}


def run(checkout: Path, args) -> dict:
    """One child in `checkout` (its own interpreter, its own kyb_cli)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), args.store, "--child",
                          "--records", str(args.records), "--repeat", str(args.repeat)],
                         cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--old", default=None)
    ap.add_argument("--new", default=".")
    ap.add_argument("--records", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.store).resolve(), args.records, args.repeat)))
        return
    args.store = str(Path(args.store).resolve())
    trees = {"old": Path(args.old).resolve(), "new": Path(args.new).resolve()}
    best: dict[str, dict[str, float]] = {}
    digests: dict[str, str] = {}
    for _ in range(args.rounds):
        for name, tree in trees.items():  # alternating: a change in the machine's load hits both
            got = run(tree, args)
            digests[name] = got["digest"]
            for step, us in got["us"].items():
                best.setdefault(name, {})[step] = min(us, best.get(name, {}).get(step, us))
    print("load:", os.popen("uptime").read().strip())
    print(f"records: {got['records']}, answers {'IDENTICAL' if digests['old'] == digests['new'] else 'DIFFER'}")
    for step in best["old"]:
        old, new = best["old"][step], best["new"][step]
        print(f"{step:14s} old {old:7.1f} µs  new {new:7.1f} µs  old/new {old / new:4.2f}")
    if digests["old"] != digests["new"]:
        sys.exit("the old and new checkouts' answers differ")


if __name__ == "__main__":
    main()

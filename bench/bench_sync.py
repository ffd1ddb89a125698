"""Sync of N incoming records in one peer commit: `python bench/bench_sync.py [N] [--profile]`.

Builds a bare remote, a victim clone with one local write, and a peer commit of N new records
(git plumbing, tests/support/hostile.py), then times `kyb sync` (a merge: both sides moved).
The issue-10 target: N=50,000 in <= 30 s on 2 cores. Prints JSON with the figures and `uptime`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.hostile import Peer, git, kyb_env, record_text, run_kyb  # noqa: E402


def main() -> None:
    n = int(next((a for a in sys.argv[1:] if a.isdigit()), "50000"))
    profile = "--profile" in sys.argv
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        env = kyb_env(root / "home")
        env["PYTHONPATH"] = str(ROOT)
        remote = root / "remote.git"
        git("init", "--quiet", "--bare", "-b", "main", str(remote))
        store = root / "victim"
        assert run_kyb(env, "init", "--clone", str(remote), str(store)).returncode == 0
        assert run_kyb(env, "add", "--key", "seed", "--title", "S", "--body", "s", store=store).returncode == 0
        assert run_kyb(env, "sync", store=store).returncode == 0
        texts = {f"bulk-{i}": record_text(f"bulk-{i}", body=f"bulk record number {i}") for i in range(n)}
        Peer(remote).push_records(texts, root / "bulk", "bulk\n")
        assert run_kyb(env, "add", "--key", "mine", "--title", "M", "--body", "m", store=store).returncode == 0
        args = [sys.executable]
        if profile:
            args += ["-m", "cProfile", "-s", "cumtime"]
        args += ["-m", "kyb_cli", "sync"]
        started = time.monotonic()
        proc = subprocess.run(args, capture_output=True, text=True, env={**env, "KYB_STORE": str(store)})
        took = time.monotonic() - started
        if profile:
            lines = proc.stdout.splitlines()
            start = next((i for i, ln in enumerate(lines) if "ncalls" in ln), 0)
            print("\n".join(lines[start:start + 40]))
        reply = json.loads(proc.stdout.split("\n", 1)[0]) if proc.returncode == 0 and not profile else {}
        print(json.dumps({"records": n, "sync_seconds": round(took, 2), "exit": proc.returncode,
                          "merged": reply.get("merged"), "stderr": proc.stderr[-300:],
                          "uptime": os.popen("uptime").read().strip()}))


if __name__ == "__main__":
    main()

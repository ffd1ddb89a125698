"""One-shot `kyb query` CPU, an older checkout against this one, alternating in one run (issue 38).

    git -C /work/main archive main | tar -x -C /tmp/old
    cp -a STORE /tmp/s-old; cp -a STORE /tmp/s-new     # a store's kept files are per checkout version
    python bench/bench_cli_ab.py --old /tmp/old --pair /tmp/s-old /tmp/s-new --runs 61

Each checkout is installed as bench_warm.cli() installs it (a wheel in its own venv), and each run is
that venv's `python -c pass`, then the two queries (`kyb --store S query "postgres replica"
--no-semantic`, stdout a pipe: JSON), their order swapped run by run; CPU is user+sys from rusage,
medians. It also says whether both answered the same bytes (stdout and stderr).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
from pathlib import Path

import bench_warm as bw


def venv_for(root: Path, base: Path) -> Path:
    bw.ROOT, bw.BASE = root, base  # installed() builds from ROOT, cached under BASE
    base.mkdir(parents=True, exist_ok=True)
    return bw.installed()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=Path, required=True, help="the older checkout (a directory)")
    ap.add_argument("--pair", nargs=2, type=Path, action="append", required=True, metavar=("OLD_STORE", "NEW_STORE"))
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/kyb-bench-ab"), help="venvs and HOME")
    a = ap.parse_args()
    os.environ.pop("PYTHONPATH", None)  # pip would take a checkout on the path for kyb_cli installed
    new_root = bw.ROOT
    old = venv_for(a.old.resolve(), a.dir / "old")
    new = venv_for(new_root, a.dir / "new")
    home = a.dir / "home"
    env = {k: v for k, v in os.environ.items() if k not in (
        "KYB_STORE", "KYB_SERVE_TOKEN", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "KYB_DEADLINES")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), KYB_FSYNC="off", KYB_BACKGROUND="off")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]), flush=True)
    for old_store, new_store in a.pair:
        cmds, outs = {}, {}
        for side, venv, store in (("old", old, old_store), ("new", new, new_store)):
            cmds[side] = [str(venv / "bin" / "kyb"), "--store", str(store), "query", "postgres replica", "--no-semantic"]
            for _ in range(2):  # the index and the kept files made before timing
                done = subprocess.run(cmds[side], env=env, capture_output=True, check=True)
            outs[side] = (done.stdout, done.stderr)
        floor = [str(new / "bin" / "python"), "-c", "pass"]
        cpu: dict[str, list[float]] = {"floor": [], "old": [], "new": []}
        for i in range(a.runs):
            cpu["floor"].append(bw._cpu_once(floor, env))
            for side in (("old", "new") if i % 2 == 0 else ("new", "old")):
                cpu[side].append(bw._cpu_once(cmds[side], env))
        m = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
        print(f"{new_store.name}: python -c pass {m['floor']:.1f} ms   old {m['old']:.1f} ms = {m['old'] / m['floor']:.2f}x"
              f"   new {m['new']:.1f} ms = {m['new'] / m['floor']:.2f}x   same bytes: {outs['old'] == outs['new']}",
              flush=True)
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()

"""The first answer on a fresh clone, old code against new, alternating (issue 39).

    python bench/bench_first_answer.py ORIGIN --a /tmp/base --b . [--rounds 3] [--model DIR]

Each run: a fresh local clone of ORIGIN (hardlinked objects, no index: it is not timed), then the
user's first question `kyb query … --history --no-wait --no-semantic` with PYTHONPATH at one
checkout (run in the clone: `python -m` puts the working directory first on sys.path, so run from a
checkout both sides would run that one), timed to its end: wall seconds and CPU seconds of it and every process it waited for (the
snapshot's workers; not the detached filler), and the CPU of the kyb process alone (`self_cpu_s`: the
process that writes the snapshot; read by an atexit callback, which also makes kyb take the ordinary
exit instead of os._exit, the same few ms on both sides). The filler it started is then ended (its process
group, by the pid in filler.lock) so it does not load the next run. Prints one JSON line a run and
the medians with the ratio B/A.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "checkout port 9090"
# `python -m kyb_cli …`, its own CPU (not its children's) written at exit to $KYB_BENCH_SELF_CPU
WRAP = ("import atexit, os, resource, runpy, sys\n"
        "def _self():\n"
        "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    with open(os.environ['KYB_BENCH_SELF_CPU'], 'w') as f:\n"
        "        f.write(str(u.ru_utime + u.ru_stime))\n"
        "atexit.register(_self)\n"
        "runpy.run_module('kyb_cli', run_name='__main__', alter_sys=True)\n")


def cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def env_for(checkout: Path, clone: Path, home: Path, model: str | None) -> dict[str, str]:
    env = dict(os.environ, KYB_STORE=str(clone), KYB_DEADLINES="off", KYB_OUTPUT="json", KYB_BACKGROUND="on",
               XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), HOME=str(home), PYTHONPATH=str(checkout))
    env["KYB_MODEL"] = model or str(home / "no-model")
    env.pop("KYB_STAGE_AT", None)
    return env


def end_filler(clone: Path, limit: float = 5.0) -> None:
    """End the filler this run started: the pid it wrote in filler.lock, and its process group."""
    lock = clone / ".git" / "kyb" / "filler.lock"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            pid = int(lock.read_text().strip())
        except (OSError, ValueError):
            time.sleep(0.05)
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return


def run(checkout: Path, origin: Path, work: Path, model: str | None) -> dict:
    clone = work / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(origin), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q"], check=True)
    env = env_for(checkout, clone, work / "home", model)
    env["KYB_BENCH_SELF_CPU"] = str(work / "self-cpu")
    time.sleep(1.0)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    c0, t0 = cpu(), time.perf_counter()
    res = subprocess.run([sys.executable, "-c", WRAP, "query", QUESTION, "--history", "--no-wait",
                          "--no-semantic"], env=env, capture_output=True, text=True, cwd=str(clone))
    took, used = time.perf_counter() - t0, cpu() - c0
    if res.returncode != 0:
        raise SystemExit(f"{checkout}: {res.stderr[-600:]}")
    ran = subprocess.run([sys.executable, "-c", "import kyb_cli; print(kyb_cli.__file__)"], env=env,
                         capture_output=True, text=True, cwd=str(clone)).stdout.strip()
    assert ran.startswith(str(checkout)), (ran, checkout)  # each side runs its own checkout
    end_filler(clone)
    hits = len(json.loads(res.stdout).get("hits", []))
    shutil.rmtree(clone, ignore_errors=True)
    own = float((work / "self-cpu").read_text())
    return {"s": round(took, 3), "cpu_s": round(used, 3), "self_cpu_s": round(own, 3), "hits": hits, "load": load}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("origin", type=Path)
    ap.add_argument("--a", type=Path, required=True, help="the old checkout")
    ap.add_argument("--b", type=Path, required=True, help="the new checkout")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", default=None, help="KYB_MODEL (default: none)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyb-first-"))
    got: dict[str, list[dict]] = {"a": [], "b": []}
    try:
        for n in range(args.rounds):
            for side in (("a", "b") if n % 2 == 0 else ("b", "a")):
                r = run(getattr(args, side).resolve(), args.origin, work / side, args.model)
                got[side].append(r)
                print(json.dumps({"side": side, **r}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {s: {k: statistics.median(r[k] for r in rs) for k in ("s", "cpu_s", "self_cpu_s")} for s, rs in got.items()}
    print(json.dumps({"median": med, "ratio_b_over_a": {k: round(med["b"][k] / med["a"][k], 3)
                                                       for k in ("s", "cpu_s", "self_cpu_s")}}))


if __name__ == "__main__":
    main()

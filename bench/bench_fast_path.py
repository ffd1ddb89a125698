"""What the `kyb query` fast path (cli/fast.py) costs, for one checkout or two side by side.

    python bench/bench_fast_path.py ROOT [ROOT2] [--runs 21]

ROOT is a checkout (`git archive HEAD | tar -x -C /tmp/before` gives an old one). Each ROOT runs
`python -m kyb_cli query checkout --no-semantic` as a fresh process with bytecode written (the shell's
PYTHONDONTWRITEBYTECODE is dropped) on a small store of its own, the runs of two ROOTs interleaved
so load on a shared machine hits both alike; every process runs in its own temporary directory
(`-m` and `-c` put the working directory first on sys.path, so a checkout there would shadow ROOT). Printed per ROOT, one JSON line: the modules the call
imports (a deterministic figure), the median of `-X importtime`'s total and of `kyb_cli.api`'s
share, the median wall time, and the in-process cost of `fast.parse` for a ten-word form.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ARGV = ["query", "checkout", "--no-semantic"]
PARSE = ("import timeit\nfrom kyb_cli import api\nfrom kyb_cli.cli import fast\n"
         "argv = ['query', 'checkout', 'port', '--limit', '5', '--tag', 'a,b', '--kind', 'knowledge', '--no-semantic']\n"
         "print(min(timeit.repeat(lambda: fast.parse(argv), number=2000, repeat=5)) / 2000 * 1e6)")


def _env(root: str, home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=root, HOME=home, XDG_CONFIG_HOME=f"{home}/c", XDG_DATA_HOME=f"{home}/d",
               XDG_CACHE_HOME=f"{home}/k", KYB_STORE=f"{home}/store", KYB_DEADLINES="off", KYB_MODEL="")
    return env


def _imports(stderr: str) -> tuple[int, float, float]:
    modules, total, api = 0, 0.0, 0.0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _self, cum, name = line.split("|")
        modules += 1
        total += int(cum) / 1000 if not name.startswith("   ") else 0
        api = int(cum) / 1000 if name.strip() == "kyb_cli.api" else api
    return modules, total, api


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    homes = {r: tempfile.mkdtemp(prefix="kyb-fast-") for r in args.roots}
    py = [sys.executable, "-m", "kyb_cli"]
    for root, home in homes.items():
        env = _env(root, home)
        subprocess.run([*py, "init", env["KYB_STORE"]], env=env, check=True, capture_output=True, cwd=home)
        subprocess.run([*py, "add", "--key", "checkout-path", "--title", "Checkout path", "--body", "port 9090"],
                       env=env, check=True, capture_output=True, cwd=home)
        subprocess.run([*py, *ARGV], env=env, check=True, capture_output=True, cwd=home)  # index, bytecode
    rows: dict[str, dict[str, list[float]]] = {r: {"modules": [], "imports_ms": [], "api_ms": [], "wall_ms": []}
                                               for r in args.roots}
    for _ in range(args.runs):
        for root, home in homes.items():
            env = _env(root, home)
            t = time.perf_counter()
            subprocess.run([*py, *ARGV], env=env, check=True, capture_output=True, cwd=home)
            rows[root]["wall_ms"].append((time.perf_counter() - t) * 1000)
            err = subprocess.run([sys.executable, "-X", "importtime", "-m", "kyb_cli", *ARGV], env=env, check=True,
                                 capture_output=True, text=True, cwd=home).stderr
            modules, total, api = _imports(err)
            rows[root]["modules"].append(modules)
            rows[root]["imports_ms"].append(total)
            rows[root]["api_ms"].append(api)
    for root, home in homes.items():
        parse_us = float(subprocess.run([sys.executable, "-c", PARSE], env=_env(root, home), check=True,
                                        capture_output=True, text=True, cwd=home).stdout)
        print(json.dumps({"root": root, "runs": args.runs, "load": os.getloadavg()[0],
                          **{k: round(statistics.median(v), 1) for k, v in rows[root].items()},
                          "parse_us": round(parse_us, 1)}))


if __name__ == "__main__":
    main()

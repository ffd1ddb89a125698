"""False alarms of `retired_elsewhere` after a port change, on a store holding an imported docs folder.

    python bench/bench_retired.py                                 # /work/shared/evalset/docs.jsonl
    python bench/bench_retired.py --docs path/to/docs.jsonl

A new store imports the documents (runbooks that mention ports such as 8080, 9090, 2379), then, for
each port P the corpus uses, writes a service record that says its API listens on P and a runbook of
our own that repeats that instruction, and updates the service record to another port. Every
`retired_elsewhere` entry naming an imported document is a false alarm (they describe other
software); the one naming our runbook is the alarm the check exists for. Then README's Quick start
record changes its port 8080 → 9090 → 8080, with no copy planted: every key named is a false alarm.
Prints JSON with the counts, per port, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = Path("/work/shared/evalset/docs.jsonl")
PORTS = (8080, 9090, 9100, 2379, 6379, 9093)


def kyb(env: dict[str, str], *args: str) -> dict:
    res = subprocess.run([sys.executable, "-m", "kyb_cli", *args], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"kyb {' '.join(args[:3])} failed: {res.stderr.strip()[-400:]}")
    return json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=Path, default=DOCS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kyb-retired-") as tmp:
        root = Path(tmp)
        store = root / "store"
        env = dict(os.environ, HOME=str(root / "home"), KYB_OUTPUT="json", KYB_STORE=str(store),
                   KYB_MODEL=str(root / "no-model"), KYB_FSYNC="off", GIT_AUTHOR_NAME="bench",
                   GIT_AUTHOR_EMAIL="bench@kyb.invalid",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        kyb(env, "init", str(store))
        imported = kyb(env, "import", str(args.docs))
        docs = {e["key"] if isinstance(e, dict) else e for e in imported.get("created", [])}
        per_port, false_alarms, found = {}, 0, 0
        for port in PORTS:
            svc, runbook = f"orders-api-port-{port}", f"orders-api-restart-{port}"
            kyb(env, "add", "--key", svc, "--title", f"Orders API on {port}",
                "--body", f"The orders API listens on port {port}. Health checks call /healthz on port {port}.")
            kyb(env, "add", "--key", runbook, "--title", "Restarting the orders API",
                "--body", f"Drain the node, restart the orders API and wait until it answers on {port}.")
            reply = kyb(env, "add", "--key", svc, "--title", f"Orders API on {port + 1}",
                        "--body", f"The orders API listens on port {port + 1}. Health checks call /healthz "
                                  f"on port {port + 1}.")
            keys = {item["key"] for item in reply.get("retired_elsewhere") or []}
            wrong = sorted(k for k in keys if k in docs or k != runbook)
            per_port[port] = {"false_alarms": len(wrong), "runbook_found": runbook in keys, "keys": wrong[:5]}
            false_alarms += len(wrong)
            found += runbook in keys
        # README's Quick start record, its port changed both ways: no copy is planted, so any key named is
        # a false alarm (the trial of issue 25 met "prom-node-exporter" here: "node" of node-3)
        quick = []
        for port in (8080, 9090, 8080):
            reply = kyb(env, "add", "--key", "checkout-write-path", "--title", "Checkout write path", "--tags",
                        "infra,checkout", "--body", f"Checkout writes go through svc-checkout on node-3, port {port}.")
            quick += [item["key"] for item in reply.get("retired_elsewhere") or []]
        print(json.dumps({"docs": len(docs), "port_changes": len(PORTS), "false_alarms": false_alarms,
                          "runbooks_found": found, "quick_start_false_alarms": sorted(quick),
                          "per_port": per_port,
                          "load": " ".join(Path("/proc/loadavg").read_text().split()[:3])}))


if __name__ == "__main__":
    main()

"""The detached filler starts once the answer that started it is out (issue 39): it waits for the
process that started it to end (or a cap, for a door that lives on), then builds the history as
`python -m kyb_cli.core.index.filler` would; a long-lived process starts one, not one per read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.support.index_helpers import T0, put

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _env() -> dict:
    return dict(os.environ, KYB_STAGE_AT="0", KYB_BACKGROUND="on",
                PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def test_wait_for_exit_returns_once_the_process_ended_or_at_the_limit():
    from kyb_cli.core.index import staged

    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    staged.wait_for_exit(proc.pid, 0.05)  # alive: back at the limit
    assert proc.poll() is None
    proc.stdin.close()
    staged.wait_for_exit(proc.pid, 60.0)  # ends: back when it did (a zombie counts)
    assert proc.wait(timeout=5) == 0


def test_the_filler_waits_for_its_starter_then_builds_the_history(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 4", T0 + 10)
    starter = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from kyb_cli.core.canon import headfile\n"
        "from kyb_cli.core.index import fresh, staged\n"
        "staged.AFTER_CAP = 600.0\n"
        "p = Path(sys.argv[1]); g = headfile.git_dir(p)\n"
        "f = fresh.fresh(p); f.conn.close()\n"
        "assert not f.history_complete\n"
        "seen = [staged.filler_running(g)]\n"
        "seen.append(staged.start_filler(p, g))  # the first read's start: already done by fresh()\n"
        "time.sleep(1.0)\n"
        "seen.append(staged.filler_running(g) or bool(staged.status(g)))  # it never ran yet\n"
        "print(seen)\n")
    out = subprocess.run([sys.executable, "-c", starter, str(store_path)], env=_env(), cwd=str(ROOT),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[False, False, False]"  # no filler ran while its starter lived
    deadline = time.monotonic() + 120
    meta = {}
    while time.monotonic() < deadline:  # the starter ended: the filler builds the history
        res = subprocess.run([sys.executable, "-m", "kyb_cli", "query", "checkout", "--history",
                              "--no-wait", "--no-semantic", "--json", "--store", str(store_path)],
                             env=_env(), capture_output=True, text=True, timeout=120)
        meta = json.loads(res.stdout)
        if "history_complete" not in meta:
            break
        time.sleep(0.2)
    assert "history_complete" not in meta
    assert len(meta["hits"]) >= 1
    assert staged_status(store_path).get("stage") in {"idle", "history_done", "vectors"}


def staged_status(store_path) -> dict:
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index import staged

    return staged.status(headfile.git_dir(store_path))

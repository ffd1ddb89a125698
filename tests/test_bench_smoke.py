"""The benchmarks behind README's figures keep running (tiny sizes; the figures come from full runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each runs a benchmark script as a process: the slow lane

ROOT = Path(__file__).resolve().parents[1]


def _bench(script: str, *args: str, tmp_path: Path) -> list[dict]:
    env = dict(os.environ, KYB_BENCH_DIR=str(tmp_path), KYB_DEADLINES="off")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_index_benchmark_runs(tmp_path):
    rows = _bench("bench_index.py", "--keys", "200", "--runs", "1", tmp_path=tmp_path)
    result = rows[-1]
    assert result["keys"] == 200 and result["catch_up_commits"] == 100
    assert set(result["query"]) >= {"current", "history", "as_of", "changed_between"}


def test_reads_benchmark_runs(tmp_path):
    rows = _bench("bench_reads.py", "--keys", "40", "--runs", "1", tmp_path=tmp_path)
    assert rows, "bench_reads printed no result"


def test_faults_benchmark_runs_and_loses_nothing(tmp_path):
    rows = _bench("bench_faults.py", "--writers", "2", "--writes", "6", "--kills", "2", tmp_path=tmp_path)
    concurrency, kills = rows
    assert concurrency["acknowledged"] + concurrency["unchanged"] + concurrency["refused"] == 12
    assert (concurrency["lost"], concurrency["broken"], kills["lost"], kills["broken"]) == (0, [], 0, [])


def test_fsync_benchmark_runs(tmp_path):
    rows = _bench("bench_fsync.py", "--writes", "3", "--cli", "1", tmp_path=tmp_path)
    assert {(r["bench"], r["fsync"]) for r in rows} == {
        (b, m) for b in ("in-process add", "cli add") for m in ("on", "off")}


def test_serve_benchmark_runs(tmp_path):
    rows = _bench("bench_serve.py", "--keys", "40", "--runs", "1", tmp_path=tmp_path)
    routes = rows[-1]["routes"]
    assert all(r["status"] == 200 for r in routes.values()), routes
    assert {"/healthz", "/tasks?limit=50", "/search?q=&limit=50"} <= set(routes)


def test_coldstart_benchmark_runs(tmp_path):
    rows = _bench("bench_coldstart.py", "--keys", "200", "--runs", "1", tmp_path=tmp_path)
    result = rows[-1]
    assert result["keys"] == 200 and result["history_complete_in_answer"] is True
    assert result["first_query_s"] > 0 and result["catch_up_100_s"] >= 0 and "lexical_over_python" in result


def test_import_benchmark_runs(tmp_path):
    rows = _bench("bench_import.py", "--docs", "20", tmp_path=tmp_path)
    assert rows[0]["created"] == 20 and rows[0]["reimport_commits"] == 0


def test_growth_benchmark_runs_every_stage_with_peak_memory(tmp_path):
    rows = _bench("bench_large.py", "--keys", "300", "--runs", "1", "--writes", "2", "--sync-records", "5",
                  "--import-docs", "8", "--out", str(tmp_path / "growth.jsonl"), "--table", tmp_path=tmp_path)
    result = rows[-1]
    assert result["shape"] == "fan-out"
    for stage in ("clone", "first", "history", "catch_up", "write", "sync", "import", "migrate"):
        assert result[stage]["s"] > 0 and "load" in result[stage], stage
    assert result["first"]["peak_mib"] > 0 and result["lexical"]["p50_ms"] > 0
    assert result["import"]["created"] == 8 and result["sync"]["records"] == 5
    # a write is a blob, three trees (root, kind, bucket) and a commit, all loose
    assert result["write"]["writes"] == 2 and result["write"]["loose_objects_per_write"] == 5
    assert result["migrate"]["moved"] > 200 and result["after_migrate_query"]["s"] > 0


def test_gen_store_fans_out_and_keeps_a_flat_option(tmp_path):
    env = dict(os.environ, KYB_BENCH_DIR=str(tmp_path))
    for flat in (False, True):
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_store.py"), "40", *(["--flat"] if flat else [])],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        info = json.loads(proc.stdout)
        assert Path(info["path"]).name == ("flat-40-1" if flat else "fan-40-1")
        files = subprocess.run(["git", "-C", info["path"], "ls-files"], capture_output=True, text=True).stdout.split()
        from kyb_cli.core.records.keys import key_of_path, old_path_of_key, path_of_key

        assert files and all(key_of_path(f) for f in files)
        assert all(f == (old_path_of_key if flat else path_of_key)(key_of_path(f)) for f in files)

"""The `kyb query` fast path (cli/fast.py) answers exactly as the Click command does: same stdout,
stderr and exit code for every form it takes, and it hands every other form to Click unchanged."""

from __future__ import annotations

import pytest

from tests.support.index_helpers import T0, put, remove

DAY = 86_400
FORMS = [
    ("checkout",),
    ("checkout", "--no-semantic", "--limit", "1"),
    ("checkout", "--history"),
    ("checkout", "--as-of", "2026-01-01"),
    ("checkout", "--changed-between", "2026-01-01", "2026-01-03"),
    ("node", "--tag", "infra,Checkout", "--kind", "knowledge"),
    ("--kind=incident", "--status", "open"),
    ("", "--recent", "--json"),
    ("--", "--history", "is", "text"),
    ("checkout", "--no-wait", "--history", "--explain"),
    ("checkout", "--today", "2026-01-05", "--no-deadlines"),
    ("checkout", "--as-of-event", "2026-01-02"),
    ("checkout", "--also", "node", "--also=cache", "--min-strength", "strong", "--explain"),
    ("checkout", "--tags", "infra", "--tag", "Checkout,infra", "--no-semantic"),
    # handed to Click: each is a usage error or a form the fast path does not parse
    ("checkout", "--kind", "bogus"),
    ("checkout", "--limit", "101"),
    ("checkout", "--as-of", "not a time"),
    ("checkout", "--histroy"),
    ("checkout", "--history", "--as-of", "2026-01-01"),
    ("-x", "checkout"),
    ("checkout", "--today", "2026-02-30"),
    ("checkout", "--fields", "key,sha"),
    ("checkout", "--min-strength", "bogus"),
    ("checkout", "--as-of", "--histroy"),
    ("checkout", "--changed-between", "2026-01-01"),
    ("checkout", "-h"),
]


@pytest.fixture
def seeded(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout via node 3", T0, tags=["infra", "checkout"])
    put(store_path, "checkout-path", "Checkout path", "checkout via node 4", T0 + DAY, tags=["infra", "checkout"])
    put(store_path, "old", "Old checkout", "checkout cache", T0 + 10)
    remove(store_path, "old", T0 + 20)
    put(store_path, "inc-2026-01-02-x", "Checkout down", "checkout timeout", T0 + DAY + 5, service="svc",
        severity="high")
    return store_path


@pytest.mark.parametrize("args", FORMS, ids=[" ".join(f) or "empty" for f in FORMS])
def test_fast_path_answers_exactly_as_click_does(seeded, kyb, args):
    env = {"KYB_DEADLINES": "on"}
    kyb("query", "warm", env=env)
    fast = kyb("query", *args, env=env)
    slow = kyb("query", *args, env={**env, "KYB_FAST": "0"})
    assert (fast.code, fast.stdout, fast.stderr) == (slow.code, slow.stdout, slow.stderr)


def test_group_options_before_the_subcommand_take_the_fast_path_too(seeded, kyb, tmp_path):
    res = kyb("--store", str(seeded), "--json", "query", "checkout", env={"KYB_STORE": str(tmp_path / "none")})
    assert res.code == 0 and res.json["count"] == 2


def test_fast_path_imports_no_click(seeded, kyb, kyb_process):
    """A process: what a new interpreter imports is the contract (-X importtime)."""
    kyb("query", "warm")
    res = kyb_process("query", "checkout", "--no-semantic", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert res.code == 0
    imported = {line.split("|")[-1].strip().split(".")[0] for line in res.stderr.splitlines() if "|" in line}
    assert "click" not in imported and "kyb_cli" in imported
    # nor what @plain and the builtin sha1 keep off the floor (issue 38): ~15 ms of every query
    assert not {"dataclasses", "inspect", "hashlib", "_hashlib", "typing"} & imported


def test_fast_path_floor_is_what_a_lexical_query_uses(seeded, kyb, kyb_process):
    """Issue 38: what a lexical query imports, counted as an installed `kyb` runs (its console script,
    no runpy) and without site (an editable install's finder imports contextlib, importlib and
    pathlib into every interpreter, which would hide them here)."""
    import subprocess
    import sys
    import sysconfig
    from pathlib import Path

    import kyb_cli

    kyb("query", "warm")
    root = str(Path(kyb_cli.__file__).resolve().parents[1])
    env = {**kyb_process._env(None), "PYTHONPATH": f"{root}:{sysconfig.get_paths()['purelib']}",
           "PYTHONPROFILEIMPORTTIME": "1", "KYB_DEADLINES": "on"}
    script = "import re, sys; from kyb_cli.cli.fast import main; sys.argv[0] = 'kyb'; main()"
    res = subprocess.run([sys.executable, "-S", "-c", script, "query", "checkout node", "--no-semantic"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    names = [line.split("|")[-1].strip() for line in res.stderr.splitlines() if "|" in line]
    first = next(n for n, name in enumerate(names) if name.startswith("kyb_cli"))
    ours = {name.split(".")[0] for name in names[first:]}
    assert {"kyb_cli", "apsw"} <= ours
    assert not {"contextlib", "importlib", "struct", "dataclasses", "inspect", "typing", "hashlib", "fcntl"} & ours
    assert "encodings.ascii" not in names[first:]  # HEAD is read as bytes: no codec import (~0.3 ms)
    assert "kyb_cli.api.operations" not in names[first:]  # query's entry only (api/_query_op.py, ~1.5 ms)
    # the store's paths are strings on this path: pathlib (its urllib.parse, ipaddress) was ~4 ms of it
    assert not {"pathlib", "urllib", "ipaddress"} & ours


def test_a_failing_fast_path_query_runs_once_and_is_worded_as_click_words_it(seeded, kyb, monkeypatch):
    """Issue 36 drift 7: the fast path handed any failure to Click, which asked the question again."""
    from kyb_cli.api import handlers
    from kyb_cli.core.errors import StoreError

    calls = []
    real = handlers.HANDLERS["query"]

    def failing(door, fields):
        calls.append(fields["text"])
        raise StoreError("synthetic store failure")

    monkeypatch.setitem(handlers.HANDLERS, "query", failing)
    res = kyb("query", "checkout")
    assert (res.code, res.stdout, res.stderr) == (4, "", "kyb: synthetic store failure\n")
    assert calls == ["checkout"]
    monkeypatch.setitem(handlers.HANDLERS, "query", lambda door, fields: 1 / 0)
    bug = kyb("query", "checkout")
    assert (bug.code, bug.stdout) == (70, "") and "internal error: ZeroDivisionError" in bug.stderr
    monkeypatch.setitem(handlers.HANDLERS, "query", real)
    assert kyb("query", "checkout").code == 0


def test_a_fast_query_process_ends_without_teardown_unless_something_needs_it(seeded, kyb_process, tmp_path):
    """Issue 38: the process of a fast-path query runs without the cyclic collector and ends by os._exit
    once its answer is out (fast._leave), streams flushed and the read log closed (no WAL left behind);
    with an atexit callback (coverage, a caller's own) it takes the ordinary exit, which runs it. The
    exit code is the answer's either way."""
    import subprocess
    import sys

    kyb_process("query", "warm")  # in a child: a read log this process held open would keep its WAL
    env = kyb_process._env(None)
    run = "import sys; from kyb_cli.cli.fast import main; sys.argv[0] = 'kyb'; main()"
    hook = ("import atexit, gc, sys; "
            "atexit.register(lambda: sys.stderr.write(f'atexit ran, gc {gc.isenabled()}\\n')); ")

    def child(script, *args):
        return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                              timeout=60)

    hooked, fast = (child(s, "query", "checkout", "--no-semantic") for s in (hook + run, run))  # fast: the last
    assert fast.returncode == hooked.returncode == 0 and fast.stdout == hooked.stdout and '"count"' in fast.stdout
    assert "atexit ran, gc False" in hooked.stderr and "atexit ran" not in fast.stderr  # and no collector
    assert not list((seeded / ".git" / "kyb").glob("reads.sqlite-*"))  # closed as teardown closes it
    missing = child(run, "--store", str(tmp_path / "none"), "query", "x", "--no-semantic")
    assert missing.returncode == 4 and "no store at" in missing.stderr


def test_one_blas_thread_unless_the_user_chose(tmp_path):
    """OpenBLAS's extra threads only spin between kyb's small products (cli/fast.one_blas_thread):
    a kyb process sets one before numpy loads; a user's own setting is kept."""
    import os
    import subprocess
    import sys

    from kyb_cli.cli.fast import one_blas_thread

    environ: dict[str, str] = {}
    one_blas_thread(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "1"}
    chosen = {"OPENBLAS_NUM_THREADS": "4"}
    one_blas_thread(chosen)
    assert chosen == {"OPENBLAS_NUM_THREADS": "4"}
    code = ("import os, sys; sys.argv = ['kyb', '--version']\n"
            "from kyb_cli.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "import numpy\nprint(os.environ['OPENBLAS_NUM_THREADS'], numpy.__name__)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.split()[-2:] == ["1", "numpy"], out.stderr

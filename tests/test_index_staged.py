"""The staged index: a new index on a big history answers from HEAD's snapshot first, a detached
filler builds the history (never two at once, restarted when killed) and then the vectors; questions
about the past wait for it (one stderr line on a pipe) or, with --no-wait, answer from what exists
with "history_complete": false. KYB_STAGE_AT=0 makes every store "big" here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from kyb_cli.core.index.staged import FILLER_MODULE
from kyb_cli.core.timestamps import rfc3339
from tests.support.index_helpers import T0, fill_in_background_now, put, remove

DAY = 86_400
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
STAGED = {"KYB_STAGE_AT": "0", "KYB_BACKGROUND": "off"}


def seed(store_path) -> dict:
    v = {}
    v["a1"] = put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    v["a2"] = put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 4", T0 + DAY)
    v["gone"] = put(store_path, "old-cache", "Cache", "checkout cache worker", T0 + DAY + 10)
    remove(store_path, "old-cache", T0 + DAY + 20)
    v["b"] = put(store_path, "db-primary", "Database primary", "the primary database", T0 + 2 * DAY,
                 tags=["db"])
    return v


def kyb_dir(store_path):
    return store_path / ".git" / "kyb"


def wait_until(check, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_a_new_index_answers_current_questions_from_heads_snapshot(kyb, store_path):
    v = seed(store_path)
    res = kyb("query", "checkout", "--no-semantic", "--full", env=STAGED)
    assert res.code == 0, res.stderr
    d = res.json
    assert d["history_complete"] is False and d["mode"] == "current"
    assert {h["key"] for h in d["hits"]} == {"checkout-path"}
    hit = d["hits"][0]
    assert "node 4" in hit["body"] and hit["is_head"] is True
    # the writing commit is not indexed yet, and is named all the same (never sha: null)
    assert hit["sha"] == v["a2"] and hit["committed_at"] == rfc3339(T0 + DAY)
    got = kyb("get", "checkout-path", env=STAGED)
    assert got.code == 0 and got.json["history_complete"] is False and got.json["sha"] == v["a2"]
    assert "node 4" in got.json["body"]
    tags = kyb("tags", env=STAGED)
    assert tags.code == 0 and tags.json["history_complete"] is False


def test_a_snapshot_of_a_long_history_leaves_its_hits_commits_to_the_history(kyb, store_path, monkeypatch):
    """Issue 39: naming a hit's commit walks the history once per hit (1.8 s a hit at 382k commits),
    so a snapshot of a history of ORIGINS_WALK_MAX commits or more answers with `sha: null` and
    `history_complete: false`; the commit is named once the history is in, and `get` names it still."""
    from kyb_cli.core.index import snapshot

    v = seed(store_path)
    monkeypatch.setattr(snapshot, "ORIGINS_WALK_MAX", 5)  # seed() makes more commits than that
    d = kyb("query", "checkout", "--no-semantic", "--full", env=STAGED).json
    assert d["history_complete"] is False and [h["key"] for h in d["hits"]] == ["checkout-path"]
    assert (d["hits"][0]["sha"], d["hits"][0]["committed_at"]) == (None, None)
    assert "node 4" in d["hits"][0]["body"]
    assert kyb("get", "checkout-path", env=STAGED).json["sha"] == v["a2"]
    monkeypatch.setattr(snapshot, "ORIGINS_WALK_MAX", 100)  # a shorter history: named at once
    (kyb_dir(store_path) / "index.sqlite").unlink()
    d = kyb("query", "checkout", "--no-semantic", env=STAGED).json
    assert d["history_complete"] is False and d["hits"][0]["sha"] == v["a2"]
    fill_in_background_now(store_path)
    d = kyb("query", "checkout", "--no-semantic", env=STAGED).json
    assert "history_complete" not in d and d["hits"][0]["sha"] == v["a2"]


def test_a_snapshot_answer_whose_commits_wait_imports_no_read_model(kyb, kyb_process, store_path, monkeypatch):
    """Issue 38: with the hits' commits left to the history ('origins' pending), a one-shot query
    does not import the read model (reads.py: the record model, trailers, ~30 secret patterns; ~40 ms
    of a one-shot `kyb query` at 10k keys before the history is in) only to name nothing."""
    from kyb_cli.core.index import snapshot

    seed(store_path)
    monkeypatch.setattr(snapshot, "ORIGINS_WALK_MAX", 5)
    assert kyb("query", "checkout", "--no-semantic", env=STAGED).json["hits"][0]["sha"] is None
    env = {**kyb_process._env(None), **STAGED, "KYB_STORE": str(store_path), "PYTHONPROFILEIMPORTTIME": "1"}
    res = subprocess.run([sys.executable, "-m", "kyb_cli", "query", "checkout", "--no-semantic"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0 and json.loads(res.stdout)["hits"][0]["sha"] is None, res.stderr[-500:]
    names = {line.split("|")[-1].strip() for line in res.stderr.splitlines() if "|" in line}
    assert "kyb_cli.core.index.origins" in names and "kyb_cli.core.index.reads" not in names


def test_no_wait_answers_historical_questions_from_what_exists(kyb, store_path):
    v = seed(store_path)
    assert kyb("query", "x", "--no-semantic", env=STAGED).code == 0  # builds the snapshot
    res = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait", "--full", env=STAGED)
    assert res.code == 0 and res.json["history_complete"] is False
    assert [h["body"] for h in res.json["hits"]] == ["checkout writes go through node 4"]  # no past yet
    hist = kyb("history", "checkout-path", "--no-wait", env=STAGED)
    assert hist.code == 0 and hist.json == {"key": "checkout-path", "versions": [], "history_complete": False}
    old = kyb("get", "checkout-path", "--at", v["a1"], "--no-wait", env=STAGED)  # git names the commit
    assert old.code == 0 and old.json["sha"] == v["a1"] and "node 3" in old.json["body"]
    assert old.json["history_complete"] is False
    rows = [json.loads(line) for line in kyb("export", "--no-wait", env=STAGED).stdout.splitlines()]
    assert {r["key"] for r in rows} == {"checkout-path", "db-primary"}  # the retracted key is not known yet
    assert all(r["history_complete"] is False for r in rows)


def test_waiting_on_a_pipe_prints_one_stderr_line_then_the_complete_answer(kyb, store_path):
    v = seed(store_path)
    assert kyb("query", "x", "--no-semantic", env=STAGED).code == 0
    res = kyb("query", "checkout", "--history", "--no-semantic", env=STAGED)
    assert res.code == 0
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kyb: waiting for the index to read the history"), res.stderr
    assert "history_complete" not in res.json
    assert {h["sha"] for h in res.json["hits"]} == {v["a1"], v["a2"], v["gone"]}
    after = kyb("query", "checkout", "--no-semantic", env=STAGED)
    assert "history_complete" not in after.json and after.json["hits"][0]["sha"] == v["a2"]
    assert kyb("history", "checkout-path", env=STAGED).json["versions"][0]["sha"] == v["a2"]


def test_the_background_filler_completes_the_history_for_later_calls(kyb, store_path):
    v = seed(store_path)
    env = {"KYB_STAGE_AT": "0", "KYB_BACKGROUND": "on"}
    first = kyb("query", "checkout", "--no-semantic", env=env)
    assert first.code == 0 and first.json.get("history_complete") is False

    def complete():
        r = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait", env=env)
        return r.json if "history_complete" not in r.json else None

    done = wait_until(complete)
    assert {h["sha"] for h in done["hits"]} == {v["a1"], v["a2"], v["gone"]}
    log = (kyb_dir(store_path) / "filler.log").read_text()
    assert log.count("history built") == 1


def test_commits_made_while_history_is_pending_keep_their_sha_after_the_swap(kyb, store_path):
    seed(store_path)
    assert kyb("query", "x", "--no-semantic", env=STAGED).code == 0  # snapshot at HEAD
    late = put(store_path, "late-note", "Late note", "written after the snapshot", T0 + 3 * DAY)
    res = kyb("get", "late-note", env=STAGED)
    assert res.json["sha"] == late and res.json["history_complete"] is False  # caught up on the snapshot
    fill_in_background_now(store_path)
    res = kyb("query", "written after", "--as-of", "HEAD", "--no-semantic", env=STAGED)
    assert "history_complete" not in res.json and res.json["hits"][0]["sha"] == late


def test_a_filler_killed_half_way_is_started_again_and_completes(kyb, store_path):
    v = seed(store_path)
    assert kyb("query", "x", "--no-semantic", env=STAGED).code == 0
    env = dict(os.environ, KYB_STAGE_AT="0")  # the fault only through faults.step (tests/support/faults.py)
    killed = subprocess.run([sys.executable, "-m", "tests.support.faults", "filler-before-swap", "kill",
                             str(store_path)], env=env, cwd=str(ROOT))
    assert killed.returncode == -9
    assert (kyb_dir(store_path) / "filler.json").exists()
    res = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait", env=STAGED)
    assert res.json["history_complete"] is False  # the killed filler swapped nothing in
    env = {"KYB_STAGE_AT": "0", "KYB_BACKGROUND": "on"}
    kyb("query", "x", "--no-semantic", env=env)  # sees no filler running: starts one

    def complete():
        r = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait", env=env)
        return r.json if "history_complete" not in r.json else None

    assert {h["sha"] for h in wait_until(complete)["hits"]} == {v["a1"], v["a2"], v["gone"]}


def test_two_processes_racing_to_start_the_filler_build_the_history_once(kyb, store_path):
    seed(store_path)
    assert kyb("query", "x", "--no-semantic", env=STAGED).code == 0
    log = kyb_dir(store_path) / "filler.log"
    env = dict(os.environ, KYB_STAGE_AT="0")
    with open(log, "ab") as err:
        procs = [subprocess.Popen([sys.executable, "-m", FILLER_MODULE, str(store_path)],
                                  env=env, stderr=err) for _ in range(3)]
        codes = [p.wait(timeout=60) for p in procs]
    assert codes == [0, 0, 0]
    assert log.read_text().count("history built") == 1
    res = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait", env=STAGED)
    assert "history_complete" not in res.json


def test_the_filler_lock_is_exclusive_while_held(store_path):
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index import staged

    gdir = headfile.git_dir(store_path)
    fd = staged.try_lock(gdir)
    assert fd is not None
    try:
        assert staged.filler_running(gdir) and staged.try_lock(gdir) is None
        assert staged.start_filler(store_path, gdir) is False
    finally:
        staged.release(fd)
    assert not staged.filler_running(gdir)


def test_vectors_pending_are_filled_in_batches_current_first_and_resume(store_path, tiny, monkeypatch):
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index import vectors
    from kyb_cli.core.search.pipeline import search

    seed(store_path)
    r = search(store_path, "куда пишет оформление заказа", semantic=True, mode="history")
    assert r["semantic"] is True and r["pending_vectors"] == 4
    monkeypatch.setattr(vectors, "BACKGROUND_BATCH", 2)
    gdir = headfile.git_dir(store_path)
    f = fresh(store_path)
    assert vectors.fill_background(f.conn, gdir) is True  # one batch, committed: then "killed"
    f.conn.close()
    now = search(store_path, "куда пишет оформление заказа", semantic=True)
    assert now["pending_vectors"] == 0  # current versions went first
    assert search(store_path, "x y", semantic=True, mode="history")["pending_vectors"] == 2
    fill_in_background_now(store_path)  # a new filler resumes where the last one stopped
    assert search(store_path, "x y", semantic=True, mode="history")["pending_vectors"] == 0


def test_background_filler_embeds_pending_vectors_for_later_queries(tiny, kyb, store_path):
    seed(store_path)
    env = {"KYB_BACKGROUND": "on"}
    first = kyb("query", "куда пишет оформление заказа", env=env)
    assert first.code == 0 and first.json["semantic"] is True

    def filled():
        r = kyb("query", "куда пишет оформление заказа", "--history", env=env)
        return r.json if r.json["pending_vectors"] == 0 else None

    assert wait_until(filled, timeout=60)["count"] > 0


def test_a_write_starts_the_filler_and_never_waits_for_vectors(tiny, kyb, store_path):
    env = {"KYB_BACKGROUND": "on"}
    assert kyb("add", "--key", "first", "--title", "First", "--body", "оформление заказа", env=env).code == 0
    assert kyb("query", "x", "--no-semantic", env=env).code == 0  # the index exists from here on
    started = time.monotonic()
    res = kyb("add", "--key", "second", "--title", "Second", "--body", "куда пишет", env=env)
    assert res.code == 0 and time.monotonic() - started < 10

    def filled():
        r = kyb("query", "куда пишет", env={**env, "KYB_BACKGROUND": "off"})  # only the write's filler
        return r.json if r.json["pending_vectors"] == 0 else None

    assert wait_until(filled, timeout=60)["semantic"] is True


def test_a_clone_starts_building_its_index_before_the_first_question(kyb, store_path, tmp_path):
    v = seed(store_path)
    target = tmp_path / "clone"
    env = {"KYB_STAGE_AT": "0", "KYB_BACKGROUND": "on"}
    res = kyb("init", "--clone", str(store_path), str(target), env=env)
    assert res.code == 0, res.stderr

    def built():
        r = kyb("query", "checkout", "--history", "--no-semantic", "--no-wait",
                env={**env, "KYB_STORE": str(target), "KYB_BACKGROUND": "off"})
        return r.json if "history_complete" not in r.json else None

    assert {h["sha"] for h in wait_until(built)["hits"]} == {v["a1"], v["a2"], v["gone"]}
    assert "history built" in (target / ".git" / "kyb" / "filler.log").read_text()


def test_a_fresh_clone_asked_about_the_past_first_builds_the_history_without_a_snapshot(store_path, monkeypatch):
    """The outside run's first question on a fresh clone waited for the history: HEAD's snapshot
    was built first only to be thrown away (issue 27, the 10k clone's edges)."""
    from kyb_cli import api
    from kyb_cli.core.index import snapshot

    v = seed(store_path)
    for name, value in STAGED.items():
        monkeypatch.setenv(name, value)

    def no_snapshot(*_a, **_k):
        raise AssertionError("a question that waits for the history must not build a snapshot first")

    monkeypatch.setattr(snapshot, "build", no_snapshot)
    _path, res = api.query(str(store_path), "checkout", history=True, semantic=False)
    assert "history_complete" not in res
    assert {h["sha"] for h in res["hits"]} == {v["a1"], v["a2"], v["gone"]}
    monkeypatch.undo()


def test_a_history_of_few_commits_but_many_versions_answers_from_a_snapshot_first(store_path, monkeypatch):
    """100k keys that came in 1,100 commits (imports, a peer's batches) were read in full before the
    first answer: staging counted commits only (issue 27)."""
    from kyb_cli import api
    from kyb_cli.core.canon import batch
    from kyb_cli.core.canon.repo import Store
    from kyb_cli.core.records.model import Record

    store = Store(store_path)
    base = store.repo.head.peel()
    commits = [batch.Commit(f"kyb: import {n}\n", {f"knowledge/k{n}-{i}.md": Record(
        key=f"k{n}-{i}", title=f"Note {i}", body=f"checkout note {n} {i}").to_markdown().encode() for i in range(40)})
        for n in range(3)]
    tip, _entries = batch.write_objects(store, base, commits, fast_import=False)
    store.repo.references["refs/heads/main"].set_target(tip)
    store.repo.checkout_head(strategy=__import__("pygit2").GIT_CHECKOUT_FORCE)
    monkeypatch.setenv("KYB_STAGE_AT", "60")  # 4 commits, 120 versions
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    _path, res = api.query(str(store_path), "checkout", semantic=False)
    assert res["history_complete"] is False and res["count"] > 0


def test_the_version_id_is_never_null_right_after_a_plain_git_clone(kyb, store_path, tmp_path):
    """Issue 36: `get` and query hits on a fresh clone (history not indexed yet) name the sha and
    commit time of the version they show, the same the complete index names afterwards."""
    seed(store_path)
    for n in range(30):
        put(store_path, f"note-{n:02d}", f"Note {n}", f"filler note {n}", T0 + 3 * DAY + n)
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 5", T0 + 4 * DAY)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(store_path), str(clone)], check=True)
    env = dict(STAGED, KYB_STORE=str(clone))
    early = {k: kyb("get", k, "--no-wait", env=env).json for k in ("checkout-path", "db-primary", "note-07")}
    hits = kyb("query", "checkout", "--no-semantic", "--no-wait", env=env).json
    assert all(e["history_complete"] is False for e in early.values()) and hits["history_complete"] is False
    fill_in_background_now(clone)
    for key, before in early.items():
        after = kyb("get", key, env=env).json
        assert "history_complete" not in after
        assert (before["sha"], before["committed_at"]) == (after["sha"], after["committed_at"]), key
        assert before["sha"] is not None
    full = {h["key"]: (h["sha"], h["committed_at"]) for h in kyb("query", "checkout", "--no-semantic", env=env).json["hits"]}
    assert {h["key"]: (h["sha"], h["committed_at"]) for h in hits["hits"]} == full and full


def test_listings_and_export_of_a_fresh_clone_name_every_version(kyb, store_path, tmp_path):
    """Issue 36: `tasks` on a snapshot names each task's commit as `get` does; `export` waits for the
    history (a snapshot lacks archived keys), so its rows carry their shas too."""
    assert kyb("task", "--key", "task-one", "--title", "One", "--body", "do it").code == 0
    seed(store_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(store_path), str(clone)], check=True)
    env = dict(STAGED, KYB_STORE=str(clone))
    listed = kyb("tasks", env=env).json
    sha = kyb("history", "task-one", env=dict(env, KYB_STORE=str(store_path))).json["versions"][0]["sha"]
    assert [t["sha"] for t in listed["tasks"]] == [sha]
    rows = [json.loads(line) for line in kyb("export", env=env).stdout.splitlines()]
    assert rows and all(r["sha"] for r in rows) and "old-cache" in {r["key"] for r in rows}


@pytest.mark.slow
def test_get_after_a_plain_git_clone_of_3000_records_names_the_version(kyb, tmp_path, monkeypatch):
    """Issue 36's check: a 3,000-record store (11k commits, bench/gen_store.py) cloned by plain git;
    the first `get` answers from HEAD's snapshot and names the commit that wrote the version."""
    monkeypatch.setenv("KYB_BENCH_DIR", str(tmp_path))
    from bench.gen_store import generate

    source = generate(3000, path=tmp_path / "source")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    files = sorted((clone / "knowledge").glob("*/*.md"))  # gen_store writes the fanned-out shape
    assert len(files) > 1000
    for path in (files[0], files[len(files) // 2], files[-1]):
        res = kyb("get", path.stem, "--no-wait", env={"KYB_STORE": str(clone), "KYB_BACKGROUND": "off"})
        assert res.code == 0, res.stderr
        want = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "--", path.relative_to(clone).as_posix()],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert res.json["history_complete"] is False and res.json["sha"] == want and res.json["committed_at"]

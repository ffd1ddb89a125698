"""Many writers at once, as real processes: every write is one commit, none lost or interleaved."""

from __future__ import annotations

import os
import subprocess
import sys

import pygit2

from kyb_cli.core.records.keys import path_of_key

WRITERS = 8
WRITES = 5

WORKER = """
import sys
from pathlib import Path
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds.knowledge import add_knowledge
from kyb_cli.core.canon.repo import Store

store_path, writer, writes, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.stdin.readline()  # start together
who = Attribution(f"agent-{writer}", f"s-{writer}", "/w", "cli")
for j in range(writes):
    key = "shared" if mode == "same" else f"key-{writer}"
    store = Store(Path(store_path))
    result = add_knowledge(store, key=key, title="T", body=f"writer {writer} write {j}", tags=[], refs=[],
                           attribution=who)
    assert result.changed, result
    print(result.sha, flush=True)
"""


def git(store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


def run_writers(store_path, mode: str) -> list[str]:
    env = {**os.environ, "KYB_LOCK_TIMEOUT": "120"}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(store_path), str(i), str(WRITES), mode],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for i in range(WRITERS)]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    shas: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        shas += out.split()
    return shas


def assert_canon_healthy(store_path) -> None:
    subprocess.run(["git", "-C", str(store_path), "fsck", "--strict", "--no-dangling"], check=True,
                   capture_output=True)
    assert git(store_path, "status", "--porcelain") == ""


def test_parallel_writers_same_key_every_write_is_a_commit(store_path):
    before = int(git(store_path, "rev-list", "--count", "HEAD"))
    shas = run_writers(store_path, "same")
    assert len(set(shas)) == WRITERS * WRITES
    assert int(git(store_path, "rev-list", "--count", "HEAD")) == before + WRITERS * WRITES
    assert git(store_path, "rev-list", "--merges", "HEAD") == ""  # one line of history, nothing interleaved
    assert set(git(store_path, "rev-list", f"HEAD~{WRITERS * WRITES}..HEAD").split()) == set(shas)
    repo = pygit2.Repository(str(store_path))
    bodies = []
    for sha in shas:
        commit = repo[sha]
        assert len(commit.parents) == 1
        diff = repo.diff(commit.parents[0], commit)
        assert [d.delta.new_file.path for d in diff] == [path_of_key("shared")]
        bodies.append(commit.tree[path_of_key("shared")].data.decode().rsplit("\n\n", 1)[1].strip())
        agent = [line for line in commit.message.splitlines() if line.startswith("Kyb-Agent: ")][0]
        assert agent.endswith(f"agent-{bodies[-1].split()[1]}")
    assert sorted(bodies) == sorted(f"writer {i} write {j}" for i in range(WRITERS) for j in range(WRITES))
    # each writer's own writes land in its order
    order = [repo[c].tree[path_of_key("shared")].data.decode().rsplit("\n\n", 1)[1].strip()
             for c in reversed(git(store_path, "rev-list", f"HEAD~{WRITERS * WRITES}..HEAD").split())]
    for i in range(WRITERS):
        mine = [b for b in order if b.startswith(f"writer {i} ")]
        assert mine == [f"writer {i} write {j}" for j in range(WRITES)]
    assert_canon_healthy(store_path)


def test_parallel_writers_different_keys_none_lost(store_path):
    shas = run_writers(store_path, "different")
    assert len(set(shas)) == WRITERS * WRITES
    repo = pygit2.Repository(str(store_path))
    head = repo.head.peel(pygit2.Commit)
    for i in range(WRITERS):
        assert f"writer {i} write {WRITES - 1}" in head.tree[path_of_key(f"key-{i}")].data.decode()
        assert (store_path / path_of_key(f"key-{i}")).read_text().rstrip().endswith(f"write {WRITES - 1}")
    assert_canon_healthy(store_path)


def test_parallel_cli_processes(kyb, store_path):
    """The real `kyb add` command, eight at once."""
    env = {**kyb.env, "KYB_STORE": str(store_path), "KYB_LOCK_TIMEOUT": "120"}
    procs = [subprocess.Popen([sys.executable, "-m", "kyb_cli", "add", "--key", f"cli-{i}", "--title", "T"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for i in range(WRITERS)]
    for i, p in enumerate(procs):
        out, err = p.communicate(input=f"body {i}", timeout=120)
        assert p.returncode == 0, err
    assert sorted(p.stem for p in (store_path / "knowledge").glob("*/*.md")) == sorted(f"cli-{i}" for i in range(WRITERS))
    assert kyb("tags").code == 0
    assert_canon_healthy(store_path)

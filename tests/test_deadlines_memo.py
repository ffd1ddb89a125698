"""The memory of undated task files (core/kinds/undated.py): it only ever skips a file whose stat is
the one it was read with, so a hand edit, a new file or a racy write is seen by the next answer."""

from __future__ import annotations

import os
import time

import pytest

from kyb_cli.core.canon.nofollow import read_files
from kyb_cli.core.kinds import undated
from kyb_cli.core.kinds.deadlines import _keep, _undated

from tests.support.task_tree import DATED, UNDATED, make_tasks


@pytest.fixture
def root(tmp_path):
    return make_tasks(tmp_path)


@pytest.fixture
def aged(monkeypatch):
    """Every stat counts as older than the margin (the clock runs 10 s ahead), as a store's tasks are."""
    real = time.time_ns
    monkeypatch.setattr(undated.time, "time_ns", lambda: real() + 10_000_000_000)


def expected(root):
    return {k: v for k, v in read_files(root, "tasks", _keep, buckets=True).items() if not _undated(v)}


def test_same_answer_as_reading_every_file(root, aged):
    assert undated.not_undated(root, _keep, _undated) == expected(root) == {"01/task-4.md": DATED % b"4"}
    assert (root / ".git" / "kyb" / undated.MEMO).exists()
    assert undated.not_undated(root, _keep, _undated) == expected(root)


def test_unchanged_undated_files_are_not_read_again(root, aged, monkeypatch):
    undated.not_undated(root, _keep, _undated)
    reads = []
    real = undated._read
    monkeypatch.setattr(undated, "_read", lambda dfd, name: reads.append(name) or real(dfd, name))
    assert undated.not_undated(root, _keep, _undated) == expected(root)
    assert reads == ["task-4.md"]  # the dated one only: what it says is always read from the file


def test_an_in_place_edit_of_the_same_size_is_seen(root, aged):
    undated.not_undated(root, _keep, _undated)
    time.sleep(0.05)  # past the clock tick of the first write
    path = root / "tasks" / "00" / "task-0.md"
    data = path.read_bytes().replace(b'status = "open"', b'due = "2026-1-"')
    assert len(data) == path.stat().st_size
    with open(path, "r+b") as fh:  # in place: same inode, same size, same directory
        fh.write(data)
    assert undated.not_undated(root, _keep, _undated) == expected(root)
    assert "00/task-0.md" in expected(root)


def test_a_new_file_and_a_removed_one_are_seen(root, aged):
    undated.not_undated(root, _keep, _undated)
    time.sleep(0.05)
    (root / "tasks" / "02" / "task-9.md").write_bytes(DATED % b"9")
    (root / "tasks" / "01" / "task-4.md").unlink()
    (root / "tasks" / "0a").mkdir()
    (root / "tasks" / "0a" / "task-a.md").write_bytes(DATED % b"a")
    assert undated.not_undated(root, _keep, _undated) == expected(root)
    assert set(expected(root)) == {"02/task-9.md", "0a/task-a.md"}


def test_what_changed_within_the_margin_is_never_remembered(root):
    undated.not_undated(root, _keep, _undated)  # real clock: every file was written just now
    import marshal

    memo = marshal.loads(marshal.loads((root / ".git" / "kyb" / undated.MEMO).read_bytes())[2]) \
        if (root / ".git" / "kyb" / undated.MEMO).exists() else {}
    assert memo == {}


def test_links_fifos_and_foreign_names_are_left_out_as_read_files_leaves_them(root, aged):
    tasks = root / "tasks"
    os.symlink(tasks / "01" / "task-4.md", tasks / "00" / "task-link.md")
    os.mkfifo(tasks / "00" / "task-fifo.md")
    (tasks / "ab").write_bytes(b"a file named like a bucket")
    os.symlink(tasks / "01", tasks / "0f")
    (tasks / "00" / "notes.txt").write_bytes(DATED % b"n")
    for _ in range(2):
        assert undated.not_undated(root, _keep, _undated) == expected(root) == {"01/task-4.md": DATED % b"4"}


def test_a_memory_of_another_shape_is_started_afresh(root, aged):
    (root / ".git" / "kyb" / undated.MEMO).write_bytes(b"not marshal")
    assert undated.not_undated(root, _keep, _undated) == expected(root)
    import marshal

    (root / ".git" / "kyb" / undated.MEMO).write_bytes(marshal.dumps({"": 1, "00/": (1,), "00/task-0.md": 3}))
    assert undated.not_undated(root, _keep, _undated) == expected(root)


def test_without_git_kyb_it_says_none_and_a_linked_or_missing_tasks_holds_none(tmp_path, root, aged):
    assert undated.not_undated(tmp_path / "nowhere", _keep, _undated) is None
    other = tmp_path / "other"
    (other / "tasks").mkdir(parents=True)
    assert undated.not_undated(other, _keep, _undated) is None  # no .git/kyb: read every file
    (root / "tasks").rename(root / "real-tasks")
    os.symlink(root / "real-tasks", root / "tasks")
    assert undated.not_undated(root, _keep, _undated) == expected(root) == {}  # a link is never followed
    (root / "tasks").unlink()
    assert undated.not_undated(root, _keep, _undated) == expected(root) == {}  # no tasks/: no task
    (other / "tasks").rmdir()  # tasks/ is looked for first: none is no task, with or without .git/kyb
    assert undated.not_undated(other, _keep, _undated) == read_files(other, "tasks", _keep, buckets=True) == {}


def test_a_temp_file_of_a_killed_save_goes_on_the_next_save(root, aged):
    kyb = root / ".git" / "kyb"
    dead, fresh = kyb / f".{undated.MEMO}.99999.tmp", kyb / f".{undated.MEMO}.99998.tmp"
    dead.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(dead, ns=(1, 1))
    undated.not_undated(root, _keep, _undated)
    assert not dead.exists() and fresh.exists()  # one being written by a live process stays


def test_an_unchanged_tree_is_answered_by_its_stats_alone(root, aged, monkeypatch):
    """A door's common answer: its kept memory, one lstat per path, no walk, no load, no save."""
    undated.not_undated(root, _keep, _undated)

    def boom(*_a, **_k):
        raise AssertionError("walked, loaded or saved although nothing changed")

    for name in ("_walk", "_load", "_save"):
        monkeypatch.setattr(undated, name, boom)
    for _ in range(2):
        assert undated.not_undated(root, _keep, _undated) == expected(root) == {"01/task-4.md": DATED % b"4"}


def _edit_in_place(path, old, new):
    data = path.read_bytes().replace(old, new)
    assert len(data) == path.stat().st_size
    with open(path, "r+b") as fh:
        fh.write(data)


CHANGES = {
    "in-place edit adds a date": lambda t: _edit_in_place(t / "00" / "task-0.md", b'status = "open"', b'due = "2026-1-"'),
    "in-place edit drops the date": lambda t: _edit_in_place(t / "01" / "task-4.md", b"due", b"dux"),
    "new file in a known bucket": lambda t: (t / "02" / "task-9.md").write_bytes(DATED % b"9"),
    "new flat file": lambda t: (t / "task-new.md").write_bytes(DATED % b"new"),
    "file removed": lambda t: (t / "00" / "task-0.md").unlink(),
    "dated file removed": lambda t: (t / "01" / "task-4.md").unlink(),
    "bucket becomes a link": lambda t: ((t / "02").rename(t / "x2"), os.symlink(t / "x2", t / "02")),
    "file becomes a link": lambda t: ((t / "00" / "task-0.md").unlink(),
                                      os.symlink(t / "01" / "task-4.md", t / "00" / "task-0.md")),
    "dated file becomes a fifo": lambda t: ((t / "01" / "task-4.md").unlink(), os.mkfifo(t / "01" / "task-4.md")),
    "a file's mode changes": lambda t: os.chmod(t / "00" / "task-0.md", 0o600),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_door_keeping_its_memory_sees_every_change(root, aged, change):
    """The memory kept in the process (undated._KEPT) and the bulk check (undated_fast.py) trust
    nothing the per-file stat rule would not: each change answers as reading every file does."""
    undated.not_undated(root, _keep, _undated)
    assert undated.not_undated(root, _keep, _undated) == expected(root)  # the kept memory answers
    time.sleep(0.05)
    CHANGES[change](root / "tasks")
    for _ in range(2):
        assert undated.not_undated(root, _keep, _undated) == expected(root)


def test_a_file_found_undated_again_is_remembered_by_the_walk(root, aged):
    undated.not_undated(root, _keep, _undated)
    time.sleep(0.05)
    _edit_in_place(root / "tasks" / "01" / "task-4.md", b"due", b"dux")
    assert undated.not_undated(root, _keep, _undated) == {}
    plan = undated._KEPT[os.fspath(root)][1]
    assert plan is not None and plan[3] == []  # no file left unvouched for: nothing read next time


def test_a_new_process_answers_from_the_saved_plan_alone(root, aged, monkeypatch):
    """A one-shot `kyb query` whose tasks did not change reads the plan saved beside the memory and
    neither decodes the memory nor walks; a change still walks and answers as reading every file."""
    undated.not_undated(root, _keep, _undated)
    monkeypatch.setattr(undated, "_KEPT", {})  # a new process

    def boom(*_a, **_k):
        raise AssertionError("decoded the memory or walked although nothing changed")

    with monkeypatch.context() as m:
        m.setattr(undated, "_memory", boom)
        m.setattr(undated, "_walk", boom)
        assert undated.not_undated(root, _keep, _undated) == expected(root) == {"01/task-4.md": DATED % b"4"}
    monkeypatch.setattr(undated, "_KEPT", {})
    time.sleep(0.05)
    (root / "tasks" / "02" / "task-9.md").write_bytes(DATED % b"9")
    assert undated.not_undated(root, _keep, _undated) == expected(root)
    assert "02/task-9.md" in expected(root)


def test_the_memory_of_the_first_format_goes_at_the_next_save(root, aged):
    old = root / ".git" / "kyb" / "tasks-undated.v1"
    old.write_bytes(b"\xfb0")
    undated.not_undated(root, _keep, _undated)
    assert not old.exists() and (root / ".git" / "kyb" / undated.MEMO).exists()

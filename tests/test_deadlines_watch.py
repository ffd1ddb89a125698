"""A long-lived door's watch on tasks/ (core/kinds/tasks_watch.py): the deadlines block's files come
back without a stat while the kernel reports nothing, and every change to tasks/ — an in-place edit,
a new, removed or renamed file or bucket, a write through a hard link made elsewhere, tasks/ or the
store replaced — is seen by the next answer."""

from __future__ import annotations

import os
import sys
import time

import pytest

from kyb_cli.core.canon.nofollow import read_files
from kyb_cli.core.index import warm
from kyb_cli.core.kinds import deadlines, tasks_watch, undated
from kyb_cli.core.kinds.deadlines import _keep, _undated

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

from tests.support.task_tree import DATED, UNDATED, make_tasks

make_store = make_tasks


@pytest.fixture
def root(tmp_path):
    return make_store(tmp_path / "store")


@pytest.fixture(autouse=True)
def door(monkeypatch):
    """A long-lived door's process (warm.keep), every stat older than the memory's margin (the clock
    10 s ahead, as a store's tasks are), and no watch left over from another test."""
    monkeypatch.setattr(warm, "_keeping", True)
    real = time.time_ns
    monkeypatch.setattr(undated.time, "time_ns", lambda: real() + 10_000_000_000)
    yield
    for watch, _gen, _answer in list(undated._WATCHED.values()):
        watch.close()
    undated._WATCHED.clear()
    undated._UNWATCHABLE.clear()
    monkeypatch.setattr(deadlines, "_PARSED", (None, ()))


def expected(root):
    return {k: v for k, v in read_files(root, "tasks", _keep, buckets=True).items() if not _undated(v)}


def answer(root):
    return undated.not_undated(root, _keep, _undated)


def watched(root):
    """Skip where this machine cannot watch the test's files (no inotify, a network filesystem)."""
    answer(root)
    if os.fspath(root) in undated._UNWATCHABLE:
        pytest.skip("tasks/ cannot be watched here")
    assert os.fspath(root) in undated._WATCHED
    return root


def test_a_quiet_watch_answers_without_reading_tasks(root, monkeypatch):
    first = answer(watched(root))
    assert first == expected(root) == {"01/task-4.md": DATED % b"4"}
    calls = []
    real = undated._not_undated
    monkeypatch.setattr(undated, "_not_undated", lambda *a: calls.append(a) or real(*a))
    assert answer(root) is first
    assert calls == []


def _edit_in_place(root, tmp_path):
    path = root / "tasks" / "00" / "task-0.md"
    data = path.read_bytes().replace(b'status = "open"', b'due = "2026-1-"')
    assert len(data) == path.stat().st_size
    with open(path, "r+b") as fh:  # same inode, same size, same directory
        fh.write(data)


def _undate_in_place(root, tmp_path):
    path = root / "tasks" / "01" / "task-4.md"
    with open(path, "r+b") as fh:
        fh.write(path.read_bytes().replace(b"due", b"xue"))


def _through_a_hard_link(root, tmp_path):
    other = tmp_path / "elsewhere.md"
    os.link(root / "tasks" / "00" / "task-0.md", other)
    with open(other, "r+b") as fh:  # written through the other name only
        fh.write(other.read_bytes().replace(b'status = "open"', b'due = "2026-1-"'))


def _new_file(root, tmp_path):
    (root / "tasks" / "02" / "task-9.md").write_bytes(DATED % b"9")


def _new_bucket(root, tmp_path):
    (root / "tasks" / "0a").mkdir()
    (root / "tasks" / "0a" / "task-a.md").write_bytes(DATED % b"a")


def _file_into_a_new_bucket_made_elsewhere(root, tmp_path):
    made = tmp_path / "0b"
    made.mkdir()
    (made / "task-b.md").write_bytes(DATED % b"b")
    os.rename(made, root / "tasks" / "0b")


def _removed(root, tmp_path):
    (root / "tasks" / "01" / "task-4.md").unlink()


def _renamed_in(root, tmp_path):
    (root / "tasks" / "02" / "draft.txt").write_bytes(DATED % b"d")
    os.rename(root / "tasks" / "02" / "draft.txt", root / "tasks" / "02" / "task-d.md")


def _replaced_by_rename(root, tmp_path):  # an editor's save: a new file renamed over the old
    path = root / "tasks" / "00" / "task-3.md"
    (root / "tasks" / "00" / ".tmp").write_bytes(DATED % b"3")
    os.rename(root / "tasks" / "00" / ".tmp", path)


def _tasks_replaced(root, tmp_path):
    os.rename(root / "tasks", tmp_path / "old-tasks")
    (root / "tasks" / "05").mkdir(parents=True)
    (root / "tasks" / "05" / "task-5.md").write_bytes(DATED % b"5")


def _store_replaced(root, tmp_path):  # the path names another store now: no event inside the old one
    os.rename(root, tmp_path / "old-store")
    make_store(root)
    (root / "tasks" / "00" / "task-0.md").write_bytes(DATED % b"0")


CHANGES = [_edit_in_place, _undate_in_place, _through_a_hard_link, _new_file, _new_bucket,
           _file_into_a_new_bucket_made_elsewhere, _removed, _renamed_in, _replaced_by_rename,
           _tasks_replaced, _store_replaced]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__.strip("_") for c in CHANGES])
def test_every_change_to_tasks_is_seen_by_the_next_answer(root, tmp_path, change):
    before = answer(watched(root))
    change(root, tmp_path)
    after = answer(root)
    assert after == expected(root)
    assert after != before
    assert answer(root) == expected(root)  # and the watch armed again vouches for the new state
    assert os.fspath(root) in undated._WATCHED


def test_a_change_read_by_one_reader_is_a_change_for_every_reader(root):
    answer(watched(root))
    watch, gen, _files = undated._WATCHED[os.fspath(root)]
    path = os.path.join(root, "tasks")
    assert watch.quiet(path, gen)
    (root / "tasks" / "task-new.md").write_bytes(DATED % b"new")
    assert not watch.quiet(path, gen)  # this reader took the events from the queue
    assert not watch.quiet(path, gen)  # the next finds it empty, and still no quiet


def test_a_reader_of_the_answer_before_a_renewal_does_not_take_its_silence(root):
    answer(watched(root))
    watch, gen, old = undated._WATCHED[os.fspath(root)]
    (root / "tasks" / "task-new.md").write_bytes(DATED % b"new")
    assert answer(root) == expected(root) != old  # a new generation of the same watch
    again, now, _files = undated._WATCHED[os.fspath(root)]
    assert again is watch and now != gen
    path = os.path.join(root, "tasks")
    assert watch.quiet(path, now) and not watch.quiet(path, gen)


def test_what_a_renewal_found_new_is_watched_by_inode_too(root, tmp_path):
    answer(watched(root))
    watch = undated._WATCHED[os.fspath(root)][0]
    (root / "tasks" / "0c").mkdir()
    (root / "tasks" / "0c" / "task-c.md").write_bytes(UNDATED % b"c")
    (root / "tasks" / "task-flat2.md").write_bytes(UNDATED % b"flat2")
    assert answer(root) == expected(root)
    assert undated._WATCHED[os.fspath(root)][0] is watch  # renewed, not armed anew
    for name in ("0c/task-c.md", "task-flat2.md"):  # each written only through a link made elsewhere
        other = tmp_path / f"link-{name.replace('/', '-')}"
        os.link(root / "tasks" / name, other)
        with open(other, "r+b") as fh:
            fh.write(other.read_bytes().replace(b'status = "open"', b'due = "2026-1-"'))
        assert answer(root) == expected(root)
        assert name in expected(root)


def test_a_watch_whose_queue_overflowed_is_armed_anew(root, monkeypatch):
    answer(watched(root))
    watch = undated._WATCHED[os.fspath(root)][0]
    (root / "tasks" / "task-new.md").write_bytes(DATED % b"new")
    watch.events.append((watch.top, tasks_watch.IN_Q_OVERFLOW, ""))
    assert answer(root) == expected(root)
    assert undated._WATCHED[os.fspath(root)][0] is not watch and watch.fd == -1


def test_a_forked_child_does_not_trust_its_parents_watch(root, monkeypatch):
    answer(watched(root))
    watch, gen, _files = undated._WATCHED[os.fspath(root)]
    monkeypatch.setattr(tasks_watch.os, "getpid", lambda: watch.pid + 1)
    assert not watch.quiet(os.path.join(root, "tasks"), gen)


def test_a_store_that_cannot_be_watched_is_statted_as_before(root, monkeypatch):
    monkeypatch.setattr(tasks_watch, "_local", lambda libc, fd: False)  # say, NFS
    assert answer(root) == expected(root)
    assert os.fspath(root) in undated._UNWATCHABLE and os.fspath(root) not in undated._WATCHED
    (root / "tasks" / "02" / "task-9.md").write_bytes(DATED % b"9")
    assert answer(root) == expected(root)


def test_a_one_shot_process_holds_no_watch(root, monkeypatch):
    monkeypatch.setattr(warm, "_keeping", False)
    assert answer(root) == expected(root)
    assert undated._WATCHED == {}


def test_dated_tasks_are_parsed_again_only_after_a_change(root, monkeypatch):
    (root / "tasks" / "task-8.md").write_bytes(DATED % b"8")  # the flat layout: its key is its name
    watched(root)
    from kyb_cli.core.records import served

    loads = []
    real = served.load
    monkeypatch.setattr(served, "load", lambda path, data: loads.append(path) or real(path, data))
    first = deadlines.dated_tasks(root)
    second = deadlines.dated_tasks(root)
    assert [r.key for r in first] == [r.key for r in second] == ["task-8"]
    assert loads.count("tasks/task-8.md") == 1  # the second answer's files came from the quiet watch
    (root / "tasks" / "task-9.md").write_bytes(DATED % b"9")
    assert sorted(r.key for r in deadlines.dated_tasks(root)) == ["task-8", "task-9"]


def test_a_running_door_sees_a_task_another_process_wrote_and_a_hand_edit(store_path, kyb_process, monkeypatch):
    """The whole way: a door's query answer carries the block; a task written by another process and
    a due date moved by hand in the working tree are in the very next answer's block."""
    from kyb_cli.core.canon.attribution import Attribution
    from kyb_cli.core.canon.repo import Store
    from kyb_cli.core.kinds.tasks import write_task
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    monkeypatch.setenv("KYB_DEADLINES", "on")
    write_task(Store(store_path), Attribution("tester", "s1", "ws", "test"), key="task-late", title="Late",
               due="2026-12-01")
    door = Tools(Door(str(store_path)))

    def block():
        data = door.query(text="anything", semantic=False, today="2026-12-10").structured_content
        return [t["key"] for t in data.get("deadlines", {}).get("tasks", [])]

    assert block() == ["task-late"]
    if os.fspath(store_path) in undated._UNWATCHABLE:
        pytest.skip("tasks/ cannot be watched here")
    assert block() == ["task-late"] and os.fspath(store_path) in undated._WATCHED
    done = kyb_process("task", "--key", "task-next", "--title", "Next", "--due", "2026-12-09")
    assert done.code == 0, done.stderr
    assert block() == ["task-late", "task-next"]
    (late,) = (store_path / "tasks").rglob("task-late.md")
    late.write_text(late.read_text().replace("2026-12-01", "2027-06-01"))  # moved by hand, not committed
    assert block() == ["task-next"]

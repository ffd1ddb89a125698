"""A working-tree `tasks/` for the deadlines block's readers (kinds/undated.py, kinds/tasks_watch.py):
six task files in three buckets (one of them dated) and one in the flat layout, beside `.git/kyb`."""

from __future__ import annotations

UNDATED = b'+++\nkey = "task-%s"\ntitle = "x"\nstatus = "open"\n+++\nbody\n'
DATED = b'+++\nkey = "task-%s"\ntitle = "x"\ndue = "2026-12-01"\n+++\nbody\n'


def make_tasks(path):
    (path / ".git" / "kyb").mkdir(parents=True)
    for n in range(6):
        bucket = path / "tasks" / f"0{n % 3}"
        bucket.mkdir(parents=True, exist_ok=True)
        (bucket / f"task-{n}.md").write_bytes((DATED if n == 4 else UNDATED) % str(n).encode())
    (path / "tasks" / "task-flat.md").write_bytes(UNDATED % b"flat")
    return path

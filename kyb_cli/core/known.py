"""What a long-lived process knows again without reading it again: a file by its stat, a path as a Path.

A door (`kyb mcp`, `kyb serve`) asks on every answer for files that rarely change (the config, the
model files, the tasks the deadlines block reads). A file is taken to be the one seen before while
its `stamp` is the same — device, inode, mode, size, mtime and ctime to the nanosecond: any write
moves the ctime, and no system call sets it back. A stamp vouches for a file only once `settled`: a
change within SETTLED_NS of now could share its clock tick with the stat it was recorded with (git's
"racy clean" index entries), so what changed that recently is read again until it is older. 3 s is
more than any filesystem's timestamp granularity (FAT's 2 s). The one assumption: a clock never set
back past a recorded ctime. The rule is declared here once; config/file.py, embed/files.py and
kinds/undated.py keep what they read by it.
"""

from __future__ import annotations

import os
import time
from operator import attrgetter

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

SETTLED_NS = 3_000_000_000

# stamp(st) -> (device, inode, mode, size, mtime_ns, ctime_ns): the file, as long as these are the
# same. An attrgetter, not a function: kinds/undated_fast.py stamps ~700 paths an answer with it.
stamp = attrgetter("st_dev", "st_ino", "st_mode", "st_size", "st_mtime_ns", "st_ctime_ns")


def settled(st: os.stat_result, now_ns: int | None = None) -> bool:
    """Nothing changed within SETTLED_NS before `now_ns` (default: now): its stamp may be trusted."""
    now = time.time_ns() if now_ns is None else now_ns
    return max(st.st_mtime_ns, st.st_ctime_ns) < now - SETTLED_NS


def remember(memo: dict, key, value, limit: int = 64):
    """`memo[key] = value`, the memo emptied first when it holds `limit` entries (a long-lived
    process's memo never grows without bound); returns `value`."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def pure(path: str) -> str:
    """`str(Path(path))` without importing pathlib (its urllib.parse and ipaddress were ~4 ms of a
    `kyb query`, issue 38): no empty or `.` parts, `..` kept, a leading `//` kept as POSIX says."""
    if os.sep != "/":
        from pathlib import Path

        return str(Path(path))
    root = "//" if path.startswith("//") and not path.startswith("///") else "/" if path.startswith("/") else ""
    return (root + "/".join(p for p in path.split("/") if p and p != ".")) or "."


_MADE: dict[str, Path] = {}


def made_path(path: str) -> Path:
    """`Path(path)`, made once per string: a door asks for its git, index and user directories on
    every answer, and building the Paths each time was a measurable part of a 1 ms lexical answer."""
    found = _MADE.get(path)
    if found is not None:
        return found
    from pathlib import Path  # only when a Path is asked for: a `kyb query` works on strings (issue 38)

    return remember(_MADE, path, Path(path), 256)

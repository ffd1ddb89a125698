"""One notion of the current version: a key's history ordered along HEAD's first-parent line.

`reads.history` lists a key's changes in revision order (what the Git-walk oracle checks). After a
sync merge, revision order can put the losing side's version above the kept one. Here the rows are
ordered the way `--as-of` reads time (the first-parent rule, docs/ARCHITECTURE.md): a commit on the
line sits where it is on the line; a commit brought in by a merge sits at that merge, below the
line's own change there. Each row then says `current` (it made the key what it is at HEAD) and, for
a side version a merge did not keep, `lost_merge` (that merge's sha). Numbered versions
(numbering.py), `kyb diff KEY` and every door read this order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kyb_cli.core.index import keypaths


def _git(store_path: Path, *args: str) -> tuple[int, str]:
    from kyb_cli.core.canon import git

    res = git.run(["-C", str(store_path), *args], cwd=store_path)
    return res.returncode, res.stdout.decode(errors="replace").strip()


def _store_path(store: Any) -> Path:
    return Path(getattr(store, "path", store))


def _merge_of(store_path: Path, sha: str, line: list[str]) -> int:
    """Index in `line` (newest first) of the oldest line commit that has `sha` as an ancestor."""
    lo, hi = 0, len(line) - 1  # line[0] (HEAD) contains every row's commit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        code, _ = _git(store_path, "merge-base", "--is-ancestor", sha, line[mid])
        if code == 0:
            lo = mid
        else:
            hi = mid - 1
    return lo


def along_line(store: Any, key: str, rows: list) -> list:
    """`rows` (HistoryRow, revision order) reordered along the first-parent line, labelled
    `current`, `on_line` and `lost_merge` (a merge sha or None)."""
    path = _store_path(store)
    if not rows:
        return rows
    code, out = _git(path, "rev-list", "--first-parent", "HEAD")
    line = out.split() if code == 0 else []
    pos = {sha: n for n, sha in enumerate(line)}
    found = keypaths.origin(path, "HEAD", key)  # looks through the move to the fanned-out layout
    origin = found[0] if found is not None else ""
    placed = []
    for n, row in enumerate(rows):
        on_line = row.sha in pos or not line
        at = pos.get(row.sha, 0) if on_line else _merge_of(path, row.sha, line)
        placed.append([at, row.sha != origin, not on_line, n, row])
    line_at = sorted(t[0] for t in placed if not t[2])
    for t in placed:
        if t[2]:  # a side version sits below the line's version that stood at its merge
            later = [p for p in line_at if p >= t[0]]
            t.insert(0, later[0] if later else len(line))
        else:
            t.insert(0, t[0])
    placed.sort(key=lambda t: (t[2], t[0], t[3], t[4]))  # the current one first, then along the line
    placed = [t[1:] for t in placed]
    seen_merge: set[int] = set()
    out_rows = []
    for at, not_current, side, _n, row in placed:
        row.labels["current"] = not not_current
        row.labels["on_line"] = not side
        lost = None
        if side and not_current and at not in seen_merge:
            lost = line[at]  # the newest side version this merge met, and did not keep
        if side:
            seen_merge.add(at)
        row.labels["lost_merge"] = lost
        out_rows.append(row)
    return out_rows
